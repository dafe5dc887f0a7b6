"""Protocols of the shuffle model: who sends what to whom (DESIGN.md, "Layers")."""

__all__: list[str] = []

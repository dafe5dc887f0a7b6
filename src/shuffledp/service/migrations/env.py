"""Alembic environment of the PIC services: runs on the connection `shuffledp.service.storage.migrate` passes."""

from alembic import context

from shuffledp.service.storage import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()

"""The PIC service schema: rounds with their state, enrolments, one row per submission, batches, posts, pins.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


# Frozen on purpose: the schema as 0001 created it, not storage.py's; a later change there is a new revision.
def upgrade() -> None:
    op.create_table(
        "rounds",
        sa.Column("role", sa.String(16), primary_key=True),
        sa.Column("round_id", sa.LargeBinary(16), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("deadline", sa.Float, nullable=True),
        sa.Column("signed_params", sa.LargeBinary, nullable=True),
        sa.Column("view", sa.LargeBinary, nullable=True),
        sa.Column("board", sa.LargeBinary, nullable=True),
        sa.Column("info", sa.Text, nullable=False),
    )
    op.create_table(
        "enrolments",
        sa.Column("user_id", _ID, primary_key=True, autoincrement=True),
        sa.Column("credential_hash", sa.LargeBinary(32), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("round_id", sa.LargeBinary(16), nullable=False),
        sa.Column("group_id", sa.Integer, nullable=False),
        sa.Column("submission_id", sa.LargeBinary(16), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint("round_id", "submission_id", name="uq_submission_id"),
    )
    op.create_index("ix_submissions_round", "submissions", ["round_id", "id"])
    op.create_table(
        "batches",
        sa.Column("role", sa.String(16), primary_key=True),
        sa.Column("round_id", sa.LargeBinary(16), primary_key=True),
        sa.Column("group_id", sa.Integer, primary_key=True),
        sa.Column("batch_id", sa.LargeBinary(16), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "posts",
        sa.Column("post_id", sa.LargeBinary(32), primary_key=True),
        sa.Column("round_id", sa.LargeBinary(16), nullable=False),
        sa.Column("recipient", sa.LargeBinary, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_posts_recipient", "posts", ["round_id", "recipient"])
    op.create_table(
        "pins",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    for name in ("pins", "posts", "batches", "submissions", "enrolments", "rounds"):
        op.drop_table(name)

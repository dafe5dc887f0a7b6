"""PIC as a deployable service (issue 18): a shuffler, a server and a bulletin board over HTTP.

Three FastAPI applications that carry the bytes of `shuffledp.protocols.pic` (the same
`Shuffler`, `Server`, `BulletinBoard` and `Client` the in-process round runs), with durable
storage (`storage`), settings (`settings`), key files (`keys`), a client SDK (`client`) and
an all-in-one mode (`apps.all_in_one`).  The README's "PIC as a service" section gives the
round as a sequence of calls.
"""

__all__: list[str] = []

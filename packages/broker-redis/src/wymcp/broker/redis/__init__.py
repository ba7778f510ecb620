"""wymcp.broker.redis: sessions, tasks, streams and rate limits shared through Redis.

`wymcp.conf.served_engine` imports `brokered_engine` by name when `BROKER` is a
`redis://`, `rediss://` or `unix://` URL; nothing else imports this package.
The stores are public for a deployment that composes an engine in code.
"""

from wymcp.broker.redis._brokered_engine import BrokeredEngine, brokered_engine
from wymcp.broker.redis._rates import RedisRates
from wymcp.broker.redis._sessions import RedisSessions
from wymcp.broker.redis._task_store import RedisTaskStore

__all__ = [
    "BrokeredEngine",
    "RedisRates",
    "RedisSessions",
    "RedisTaskStore",
    "brokered_engine",
]

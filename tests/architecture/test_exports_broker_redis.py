"""The public surface of wymcp.broker.redis is exactly this list."""

from __future__ import annotations

import subprocess
import sys

import wymcp.broker.redis
from wymcp.conf import Settings, served_engine


def test_the_facade_exports_the_broker_and_its_stores():
    assert wymcp.broker.redis.__all__ == [
        "BrokeredEngine",
        "RedisRates",
        "RedisSessions",
        "RedisTaskStore",
        "brokered_engine",
    ]
    for name in wymcp.broker.redis.__all__:
        assert callable(getattr(wymcp.broker.redis, name))


def test_conf_builds_the_broker_a_redis_url_names():
    settings = Settings(BROKER="redis://127.0.0.1:1/0", STATE_SECRET="s" * 32)
    engine, served = served_engine(settings)
    assert isinstance(served, wymcp.broker.redis.BrokeredEngine)
    assert served.engine is engine


def test_the_broker_never_imports_aiohttp():
    code = "import sys, wymcp.broker.redis; print('aiohttp' in sys.modules)"
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


def test_an_http_app_without_broker_loads_neither_the_broker_nor_redis():
    code = (
        "import sys\n"
        "from wymcp.transport.aiohttp import create_app\n"
        "create_app()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'redis'"
        " or m.startswith('wymcp.broker')))"
    )
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"

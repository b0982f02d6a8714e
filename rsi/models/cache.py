"""The response cache: a model's reply to an exact request is computed once per workspace.

An evaluation serves generation 0 and the parent the same requests every generation, and ablations and
paired selection repeat requests the store has answered before. Where the backend's answer is a pure
function of the request and the weights, that answer can be kept and served again; nowhere else.

**Exact** (`ModelIdentity.exact`): only the embedded backend in float32 is proven exact here.
- greedy rows: in float32 a row batched with others decodes the same tokens as alone
  (tests/models/test_embedded.py `test_requests_joining_a_running_batch_match_one_at_a_time`);
- seeded samples: each row draws from its own seeded generator, so a seeded request gets the same text
  whatever shares its steps (`test_sampled_and_adapter_rows_joining_late_match_alone`, float32).
  An unseeded sample is never exact. bfloat16 is never exact (padding and batch shape change its
  rounding, so a near-tie can flip), and neither is any remote backend (nothing here proves it).

**Key** (`ModelIdentity.key`): sha256 over the backend, the base weights' digest, the dtype, the
numerics (torch and transformers versions, the lean decoding step on or off), the digest of the adapter
the request names (none for the bare base) and the whole request (messages, n, temperature, top_p,
max_tokens, stop, stop_after_code, seed). A changed adapter has another digest, so a reply made under
other weights is never served; `load_adapter` re-reads the digest of the folder it is given.

**Store** (`ReplyCache`): one table in its own database, `runs/cache.sqlite` by default (`RSI_REPLY_CACHE_DB`
takes any SQLAlchemy URL, e.g. the PostgreSQL server SLURM workers share). Rows are only ever inserted
(first writer wins, `ON CONFLICT DO NOTHING`: two workers that race make the same reply) and each insert
is its own transaction in SQLite's WAL journal, so a SIGKILL mid-write leaves the earlier rows readable.
A cache fault is ours, never the agent's: a read or write that fails is counted and the model answers.

`CachedModel` wraps a `ChatModel` (and keeps `QueuedModel`'s `submit` where the inner model queues):
a hit comes back with `cached_from` naming what first made it (a run id, or `eval:<id>`), so the
trajectory says so, and the wrapper's `CacheStats` count hits, misses, uncacheable requests and the
tokens a hit did not spend. `RSI_REPLY_CACHE=off` (what `--no-cache` sets) turns the cache off.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Column, DateTime, Engine, Integer, MetaData, String, Table, Text, delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from rsi.contracts.hashing import canonical_json
from rsi.models.base import ChatModel, GenerationRequest, GenerationResult
from rsi.models.served import QueuedModel, ServedFuture

ENV_CACHE = "RSI_REPLY_CACHE"  # "off" turns the cache off (--no-cache sets it, so workers inherit it)
ENV_CACHE_DB = "RSI_REPLY_CACHE_DB"
CACHE_FILE = "cache.sqlite"  # under the workspace's runs/
# What a reply made now is recorded as made by: the attempt function sets the attempt's run id here (the
# wrapper is shared by every run a process serves); unset, the wrapper's own origin is used.
CACHE_ORIGIN: contextvars.ContextVar[str | None] = contextvars.ContextVar("rsi_cache_origin", default=None)

_metadata = MetaData()
replies_table = Table(
    "cached_reply",
    _metadata,
    Column("key", String(64), primary_key=True),
    Column("backend", String(64), nullable=False),
    Column("model", String(256), nullable=False, index=True),
    Column("dtype", String(32), nullable=False),
    Column("origin", String(256), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("result_json", Text, nullable=False),
)


def cache_enabled() -> bool:
    return os.environ.get(ENV_CACHE, "").strip().lower() not in ("off", "0", "false", "no")


def cache_url(runs_dir: Path) -> str:
    """Where a workspace's cache lives: `RSI_REPLY_CACHE_DB` if set, else SQLite at runs/cache.sqlite."""
    return os.environ.get(ENV_CACHE_DB) or f"sqlite:///{Path(runs_dir) / CACHE_FILE}"


# -- identity and exactness (pure) -----------------------------------------------------------------


@dataclass(frozen=True)
class ModelIdentity:
    """Everything besides the request that decides a reply: which backend, weights, number format."""

    backend: str
    model: str  # the base's name, for listing and pruning by model
    base_digest: str
    dtype: str
    numerics: str
    adapters: Mapping[str, str] = field(default_factory=dict)  # specialist name -> adapter content digest
    greedy_exact: bool = False
    seeded_exact: bool = False

    def exact(self, request: GenerationRequest) -> bool:
        """Is this request's reply a pure function of the request and the weights (module docstring)?"""
        if request.specialist is not None and request.specialist not in self.adapters:
            return False  # weights we cannot name: never cached
        if request.temperature == 0.0:
            return self.greedy_exact
        return self.seeded_exact and request.seed is not None

    def key(self, request: GenerationRequest) -> str:
        adapter = self.adapters.get(request.specialist) if request.specialist is not None else None
        asked = request.model_dump(mode="json")
        if request.temperature == 0.0:  # greedy rows keep the argmax: the seed and top_p decide nothing
            asked.update(seed=None, top_p=1.0)
        material = {
            "backend": self.backend, "base": self.base_digest, "dtype": self.dtype, "numerics": self.numerics,
            "adapter": adapter, "request": asked,
        }
        return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()

    def with_adapter(self, name: str, digest: str | None) -> ModelIdentity:
        adapters = {k: v for k, v in self.adapters.items() if k != name}
        if digest is not None:
            adapters[name] = digest
        return replace(self, adapters=adapters)


def embedded_numerics() -> str:
    """The library versions and decoding path float32 results depend on (a new torch may round otherwise)."""
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for package in ("torch", "transformers", "peft"):
        try:
            parts.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package}=none")
    parts.append(f"lean_step={os.environ.get('RSI_LEAN_STEP', '1')}")
    return ";".join(parts)


def identity_for(spec: Any, workspace_root: Path | None, adapters: Mapping[str, Path]) -> ModelIdentity | None:
    """The identity of the model `spec.serving` names, or None where no request of it is exact."""
    if spec.serving.backend != "embedded" or spec.serving.dtype != "float32":
        return None
    from rsi.models.embedded.weights import adapter_digest, folder_digest, gguf_digest, locate_base

    weights = locate_base(spec.base, workspace_root)
    if weights.format == "hf":
        base_digest = folder_digest(weights.path)
    else:
        base_digest = spec.base.sha256 or gguf_digest(weights.path)
    return ModelIdentity(
        backend="embedded", model=spec.base.id, base_digest=base_digest, dtype=spec.serving.dtype,
        numerics=embedded_numerics(), adapters={name: adapter_digest(path) for name, path in adapters.items()},
        greedy_exact=True, seeded_exact=True,
    )


# -- the store ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CachedReply:
    result: GenerationResult
    origin: str


@dataclass(frozen=True)
class CacheSummary:
    """One model's rows in the cache: for `rsi cache list`."""

    model: str
    backend: str
    dtype: str
    replies: int
    completion_tokens: int
    oldest: datetime | None
    newest: datetime | None


class ReplyCache:
    """The table of cached replies (module docstring: insert-only, first writer wins)."""

    def __init__(self, url: str) -> None:
        from rsi.store.engine import make_engine

        self.url = url
        self.engine: Engine = make_engine(url)
        with self.engine.begin() as conn:
            _metadata.create_all(conn)

    def get(self, key: str) -> CachedReply | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(replies_table.c.result_json, replies_table.c.origin)
                               .where(replies_table.c.key == key)).first()
        if row is None:
            return None
        return CachedReply(GenerationResult.model_validate_json(row.result_json), row.origin)

    def put(self, key: str, identity: ModelIdentity, result: GenerationResult, origin: str) -> None:
        values = {
            "key": key, "backend": identity.backend, "model": identity.model, "dtype": identity.dtype,
            "origin": origin[:256], "created_at": datetime.now(UTC), "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "result_json": result.model_copy(update={"cache": "", "cached_from": None, "latency_s": 0.0}).model_dump_json(),
        }
        insert = pg_insert if self.engine.dialect.name == "postgresql" else sqlite_insert
        with self.engine.begin() as conn:
            conn.execute(insert(replies_table).values(**values).on_conflict_do_nothing(index_elements=["key"]))

    def summary(self) -> list[CacheSummary]:
        t = replies_table.c
        query = (select(t.model, t.backend, t.dtype, func.count(), func.sum(t.completion_tokens),
                        func.min(t.created_at), func.max(t.created_at))
                 .group_by(t.model, t.backend, t.dtype).order_by(t.model, t.dtype))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [CacheSummary(model=r[0], backend=r[1], dtype=r[2], replies=int(r[3]), completion_tokens=int(r[4] or 0),
                             oldest=_aware(r[5]), newest=_aware(r[6])) for r in rows]

    def prune(self, *, model: str | None = None, older_than: timedelta | None = None) -> int:
        """Delete the rows of `model` and/or older than `older_than` (both None: every row). Returns the count."""
        statement = delete(replies_table)
        if model is not None:
            statement = statement.where(replies_table.c.model == model)
        if older_than is not None:
            statement = statement.where(replies_table.c.created_at < datetime.now(UTC) - older_than)
        with self.engine.begin() as conn:
            return int(conn.execute(statement).rowcount or 0)

    def close(self) -> None:
        self.engine.dispose()


_open_caches: dict[str, ReplyCache] = {}
_open_lock = threading.Lock()


def open_cache(url: str) -> ReplyCache:
    """This process's one `ReplyCache` for `url` (an engine and its pool per database, not per model)."""
    with _open_lock:
        cache = _open_caches.get(url)
        if cache is None:
            cache = _open_caches[url] = ReplyCache(url)
        return cache


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:  # SQLite gives naive datetimes back
        return value.replace(tzinfo=UTC)
    return value


# -- the wrapper -------------------------------------------------------------------------------------


@dataclass
class CacheStats:
    """What the cache did for one wrapped model (thread-safe counters)."""

    hits: int = 0
    misses: int = 0
    uncacheable: int = 0
    faults: int = 0  # reads or writes of the cache that failed (the model answered instead)
    tokens_not_spent: int = 0  # prompt + completion tokens of the replies served from the cache
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "uncacheable": self.uncacheable, "faults": self.faults,
                "tokens_not_spent": self.tokens_not_spent}


class CachedModel:
    """A `ChatModel` whose exact requests are answered from a `ReplyCache` when it holds them."""

    def __init__(self, inner: ChatModel, cache: ReplyCache, identity: ModelIdentity, origin: str) -> None:
        self.inner = inner
        self.cache = cache
        self.identity = identity
        self.origin = origin
        self.name = inner.name
        self.stats = CacheStats()

    def lookup(self, request: GenerationRequest) -> tuple[str | None, GenerationResult | None]:
        """(key, cached result): key None when the request is not exact or the cache was turned off since
        the model was made (a process serves many runs); result None on a miss."""
        if not cache_enabled():
            return None, None
        if not self.identity.exact(request):
            self.stats.add(uncacheable=1)
            return None, None
        key = self.identity.key(request)
        try:
            hit = self.cache.get(key)
        except Exception:  # noqa: BLE001 - a broken cache is ours: the model answers instead
            self.stats.add(faults=1)
            return key, None
        if hit is None:
            return key, None
        self.stats.add(hits=1, tokens_not_spent=hit.result.prompt_tokens + hit.result.completion_tokens)
        return key, hit.result.model_copy(update={"cache": "hit", "cached_from": hit.origin, "latency_s": 0.0})

    def origin_now(self) -> str:
        """What a reply made now is made by: read in the caller's thread (a queued reply lands in another)."""
        return CACHE_ORIGIN.get() or self.origin

    def remember(self, key: str | None, result: GenerationResult, origin: str) -> GenerationResult:
        if key is None:
            return result
        self.stats.add(misses=1)
        try:
            self.cache.put(key, self.identity, result, origin)
        except Exception:  # noqa: BLE001 - the reply stands; only its reuse is lost
            self.stats.add(faults=1)
        return result.model_copy(update={"cache": "miss"})

    def generate(self, request: GenerationRequest) -> GenerationResult:
        key, hit = self.lookup(request)
        if hit is not None:
            return hit
        return self.remember(key, self.inner.generate(request), self.origin_now())

    def load_adapter(self, name: str, path: str) -> None:
        from rsi.models.embedded.weights import adapter_digest

        self.inner.load_adapter(name, path)
        self.identity = self.identity.with_adapter(name, adapter_digest(Path(path)))

    def unload_adapter(self, name: str) -> None:
        self.inner.unload_adapter(name)
        self.identity = self.identity.with_adapter(name, None)

    def use_summary(self) -> str:
        inner = getattr(self.inner, "use_summary", None)
        return str(inner()) if callable(inner) else ""

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def __getattr__(self, name: str) -> Any:  # number_format, batch_stats, model, ...: the inner model's
        return getattr(self.inner, name)


class CachedQueuedModel(CachedModel):
    """`CachedModel` over a model that queues in process: `submit` keeps the `QueuedModel` protocol."""

    def submit(self, request: GenerationRequest) -> ServedFuture:
        key, hit = self.lookup(request)
        if hit is not None:
            future = ServedFuture()
            future.set_running_or_notify_cancel()
            future.set_result(hit)
            return future
        inner: Any = self.inner
        origin = self.origin_now()
        return inner.submit(request).chained(lambda result: self.remember(key, result, origin))  # type: ignore[no-any-return]


def scripted_model_with_cache(model: ChatModel, script: Path, workspace_root: Path) -> ChatModel:
    """A scripted model (a testing hook) whose script declares itself exact, behind the workspace's cache:
    its identity is the script file's digest, so another script is another model."""
    if not cache_enabled():
        return model
    digest = hashlib.sha256(Path(script).read_bytes()).hexdigest()
    identity = ModelIdentity(backend="scripted", model=f"scripted:{Path(script).name}", base_digest=digest,
                             dtype="exact", numerics="", greedy_exact=True, seeded_exact=True)
    return CachedModel(model, open_cache(cache_url(Path(workspace_root) / "runs")), identity, origin="run")


def with_cache(model: ChatModel, spec: Any, workspace_root: Path | None, adapters: Mapping[str, Path],
               origin: str) -> ChatModel:
    """`model` behind the workspace's cache where the cache is on and some request of it can be exact."""
    if workspace_root is None or not cache_enabled():
        return model
    identity = identity_for(spec, workspace_root, adapters)
    if identity is None:
        return model
    cache = open_cache(cache_url(Path(workspace_root) / "runs"))
    wrapper = CachedQueuedModel if isinstance(model, QueuedModel) else CachedModel
    return wrapper(model, cache, identity, origin)

"""Type stubs of the native module (bloomkit's filters, files and Redis filters)."""

from os import PathLike
from typing import Iterable, Iterator, List, Optional, Type, TypeVar, Union, type_check_only

Element = Union[str, bytes, bytearray, int]
"""An element: ``str`` (UTF-8), ``bytes``/``bytearray`` (as is), ``int`` (i64 little-endian)."""

BytesLike = Union[bytes, bytearray, memoryview]
"""Binary data: ``bytes``, ``bytearray``, ``memoryview`` or any other object of the buffer
protocol."""

StrOrBytesPath = Union[str, bytes, "PathLike[str]", "PathLike[bytes]"]
_F = TypeVar("_F", bound="Filter")
_B = TypeVar("_B", bound="_IntSet")

class RedisError(Exception):
    """A Redis filter operation failed (server unreachable or timed out, server error, no
    filter or a damaged one under the name)."""

class Filter:
    """Base class of every in-memory filter kind."""

    def add(self, element: Element, /) -> None:
        """Adds an element."""
    def check_and_add(self, element: Element, /) -> bool:
        """Adds an element; returns whether it was (probably) present before."""
    def __contains__(self, element: Element) -> bool: ...
    def add_many(self, elements: Iterable[Element]) -> None:
        """Adds every element of any iterable, probing without the GIL."""
    def contains_many(self, elements: Iterable[Element]) -> List[bool]:
        """Tests every element of any iterable, probing without the GIL."""
    def update(self, *iterables: Iterable[Element]) -> None:
        """Adds the elements of every iterable (as ``set.update``)."""
    def remove(self, element: Element) -> None:
        """Counting and d-left filters only (``TypeError`` otherwise, and for a counting filter
        with minimal increase); ``KeyError`` if absent."""
    def clear(self) -> None:
        """Removes every element."""
    def __len__(self) -> int:
        """The estimated number of distinct elements added, rounded."""
    def estimated_len(self) -> float: ...
    def estimated_fpp(self) -> float:
        """The false-positive probability expected now."""
    @property
    def fpp(self) -> Optional[float]:
        """The design false-positive probability (``None`` if unknown)."""
    @property
    def capacity(self) -> Optional[int]:
        """The design capacity (``None`` if unknown)."""
    @property
    def bits(self) -> int: ...
    @property
    def hashes(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    @property
    def kind(self) -> str:
        """``classic``, ``blocked``, ``counting``, ``dleft``, ``scalable``, ``count-window`` or
        ``time-window``."""
    def __or__(self: _F, other: _F) -> _F: ...
    def __and__(self: _F, other: _F) -> _F: ...
    def __ior__(self: _F, other: _F) -> _F: ...
    def __iand__(self: _F, other: _F) -> _F: ...
    def __eq__(self, other: object) -> bool:
        """Whether ``other`` is a filter of the same class with the same parameters and bits
        (a copy, or a pickled and unpickled filter, equals its original)."""
    __hash__: None  # type: ignore[assignment]  # mutable, like set
    def __copy__(self: _F) -> _F: ...
    def __deepcopy__(self: _F, memo: object) -> _F: ...
    def to_bytes(self) -> bytes:
        """The filter in bloomkit's native format."""
    @classmethod
    def from_bytes(cls: Type[_F], data: BytesLike) -> _F: ...
    def save(self, path: StrOrBytesPath) -> None:
        """Saves atomically in bloomkit's native format (the CLI reads it)."""
    def save_new(self, path: StrOrBytesPath) -> None:
        """Saves to a new file only if nothing is at ``path`` (``FileExistsError``); of many
        processes creating one path at once exactly one succeeds."""
    @classmethod
    def load(cls: Type[_F], path: StrOrBytesPath) -> _F:
        """Loads a native file; ``OSError`` if unreadable, ``ValueError`` if damaged or of
        another kind."""

@type_check_only
class _SizedFilter(Filter):
    """(Stubs only) a kind built for ``capacity`` elements at false-positive rate ``fpp``."""

    def __init__(self, capacity: int, fpp: float) -> None: ...

class BloomFilter(Filter):
    """A classic filter; ``preset`` is ``bloomkit``, ``bloomkit64`` (bloomkit's own from one
    64-bit hash per element), ``guava``, ``guava32``, ``go`` or ``redisson``."""

    def __init__(self, capacity: int, fpp: float, preset: str = "bloomkit") -> None: ...
    @staticmethod
    def with_params(bits: int, hashes: int, preset: str = "bloomkit") -> BloomFilter: ...
    def to_guava(self) -> bytes: ...
    @staticmethod
    def from_guava(data: BytesLike) -> BloomFilter: ...
    def to_go(self) -> bytes: ...
    @staticmethod
    def from_go(data: BytesLike) -> BloomFilter: ...
    def to_go_json(self) -> str: ...
    @staticmethod
    def from_go_json(data: Union[str, BytesLike]) -> BloomFilter: ...
    @staticmethod
    def open_mmap(path: StrOrBytesPath, writable: bool = False) -> MappedFilter: ...

class BlockedBloomFilter(_SizedFilter):
    """A cache-blocked filter: one cache line per element."""

    @staticmethod
    def open_mmap(path: StrOrBytesPath, writable: bool = False) -> MappedFilter: ...

class CountingBloomFilter(_SizedFilter):
    """A counting filter: supports ``remove``."""

    def count(self, element: Element) -> int: ...

class DLeftCountingFilter(_SizedFilter):
    """A d-left counting filter: ``remove``; ``len()`` is the number of fingerprints held."""

    def count(self, element: Element) -> int: ...
    @property
    def saturated(self) -> int: ...
    @property
    def load_factor(self) -> float: ...

class CountWindowFilter(Filter):
    """The last ``window`` insertions (older ones are forgotten)."""

    def __init__(self, window: int, fpp: float) -> None: ...
    @property
    def window(self) -> int: ...
    @property
    def guaranteed_window(self) -> int: ...
    @property
    def forgotten_after(self) -> int: ...
    @property
    def inserted(self) -> int: ...

class TimeWindowFilter(Filter):
    """What was added within the last ``window`` seconds (system clock).

    Each of the ``generations`` is sized for ``capacity / generations`` insertions (an even
    rate): a burst beyond that within one generation raises the FPR.
    """

    def __init__(
        self, window: float, capacity: int, fpp: float, generations: Optional[int] = ...
    ) -> None: ...
    @property
    def window(self) -> float: ...
    @property
    def generations(self) -> int: ...
    @property
    def generation_length(self) -> float: ...

class ScalableBloomFilter(Filter):
    """A filter that grows by layers, keeping the compound FPR under ``fpp``."""

    def __init__(
        self,
        initial_capacity: int,
        fpp: float,
        growth: int = 2,
        tightening: float = 0.5,
        max_layers: Optional[int] = None,
        max_capacity: Optional[int] = None,
    ) -> None: ...
    @property
    def layers(self) -> int: ...

class AtomicBloomFilter(_SizedFilter):
    """A classic filter with lock-free adds from many threads."""


class AtomicBlockedBloomFilter(_SizedFilter):
    """A blocked filter with lock-free adds from many threads."""


class MappedFilter:
    """A classic or blocked filter's file mapped into memory (``open_mmap``); a context
    manager that seals the file on exit. Nothing may truncate the file while it is mapped: an
    access past its new end raises SIGBUS, which ends the interpreter (Python cannot catch it);
    bloomkit's own saves replace a file by renaming a new one over it, which is safe."""

    def __contains__(self, element: Element) -> bool: ...
    def contains_many(self, elements: Iterable[Element]) -> List[bool]: ...
    def add(self, element: Element, /) -> None: ...
    def check_and_add(self, element: Element, /) -> bool: ...
    def add_many(self, elements: Iterable[Element]) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def verify(self) -> None: ...
    def __enter__(self) -> MappedFilter: ...
    def __exit__(self, exc_type: object, exc: object, tb: object) -> bool: ...
    def __len__(self) -> int: ...
    @property
    def writable(self) -> bool: ...
    @property
    def dirty(self) -> bool: ...
    @property
    def kind(self) -> str: ...
    @property
    def bits(self) -> int: ...
    @property
    def hashes(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def fpp(self) -> float: ...

class SharedFilter:
    """Base class of the filters kept in Redis (``bloomkit.redis``)."""

    def add(self, element: Element) -> bool:
        """Adds an element; returns whether it was new."""
    def check_and_add(self, element: Element) -> bool: ...
    def __contains__(self, element: Element) -> bool: ...
    def add_many(self, elements: Iterable[Element]) -> List[bool]: ...
    def contains_many(self, elements: Iterable[Element]) -> List[bool]: ...
    def estimated_len(self) -> float: ...
    def __len__(self) -> int: ...
    def remove(self, element: Element) -> None:
        """``CountingRedisFilter`` only (``TypeError`` otherwise); ``KeyError`` if absent."""
    def remove_many(self, elements: Iterable[Element]) -> List[bool]:
        """``CountingRedisFilter`` only; for each, whether it was there to remove."""
    def count(self, element: Element) -> int:
        """``CountingRedisFilter`` only: how many times it was added, at most 15."""
    def clear(self) -> None:
        """Not a ``ScalableRedisFilter`` or ``RedissonFilter`` (``TypeError``)."""
    def delete(self) -> None:
        """Every kind but ``RedissonFilter`` (``TypeError``)."""
    @property
    def name(self) -> str: ...

@type_check_only
class _SizedShared(SharedFilter):
    """(Stubs only) created with ``capacity`` and ``fpp`` (or opened without them)."""

    def __init__(
        self,
        url: str,
        name: str,
        capacity: Optional[int] = None,
        fpp: Optional[float] = None,
        timeout: float = 5.0,
    ) -> None: ...

class RedisFilter(_SizedShared):
    """bloomkit's register-blocked layout (the CLI's ``redis://HOST:PORT/NAME``)."""

class RedissonFilter(_SizedShared):
    """Bit-exact with Java Redisson's ``RBloomFilter``."""

class CountingRedisFilter(_SizedShared):
    """A counting filter in Redis: ``remove``, ``remove_many`` and ``count`` work."""

class ScalableRedisFilter(SharedFilter):
    def __init__(
        self,
        url: str,
        name: str,
        capacity: Optional[int] = None,
        fpp: Optional[float] = None,
        growth: int = 2,
        tightening: float = 0.5,
        timeout: float = 5.0,
    ) -> None: ...

class TimeWindowRedisFilter(SharedFilter):
    """What was added within the last ``window`` seconds, in generations Redis expires.

    Each of the ``generations`` is sized for ``capacity / generations`` insertions (an even
    rate): a burst beyond that within one generation raises the FPR.
    """

    def __init__(
        self,
        url: str,
        name: str,
        window: Optional[float] = None,
        capacity: Optional[int] = None,
        fpp: Optional[float] = None,
        generations: Optional[int] = None,
        timeout: float = 5.0,
    ) -> None: ...
    @property
    def window(self) -> float: ...
    @property
    def generations(self) -> int: ...

class IntIterator(Iterator[int]):
    """A snapshot of a bitmap's integers, ascending."""

    def __iter__(self) -> IntIterator: ...
    def __next__(self) -> int: ...
    def __length_hint__(self) -> int: ...

@type_check_only
class _IntSet:
    """(Stubs only) what ``Bitmap`` and ``TwoBitMap`` share: integers of ``start..end``."""

    def __init__(
        self, start: int, end: int, expected: Optional[int] = None, form: Optional[str] = None
    ) -> None: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def form(self) -> str:
        """``dense`` or ``roaring``."""
    @property
    def memory_bytes(self) -> int: ...
    def __len__(self) -> int:
        """The number of distinct integers present (exact)."""
    def __contains__(self, value: int) -> bool: ...
    def add_many(self, values: Iterable[int]) -> int:
        """Adds every integer; returns how many were new."""
    def clear(self) -> None: ...
    def __eq__(self, other: object) -> bool:
        """Whether ``other`` is a bitmap of the same class with the same range and integers,
        whatever their forms."""
    __hash__: None  # type: ignore[assignment]  # mutable, like set
    def __copy__(self: _B) -> _B: ...
    def __deepcopy__(self: _B, memo: object) -> _B: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls: Type[_B], data: BytesLike) -> _B: ...
    def save(self, path: StrOrBytesPath) -> None: ...
    @classmethod
    def load(cls: Type[_B], path: StrOrBytesPath) -> _B: ...

class Bitmap(_IntSet):
    """An exact set of the integers of a range (no false positives)."""

    def add(self, value: int, /) -> bool:
        """Adds an integer; returns whether it was new (``ValueError`` outside the range)."""
    def contains_many(self, values: Iterable[int]) -> List[bool]: ...
    def remove(self, value: int) -> None:
        """``KeyError`` if absent."""
    def discard(self, value: int) -> bool: ...
    def to_form(self, form: str) -> Bitmap: ...
    def rank(self, value: int) -> int:
        """How many integers present are at most ``value`` (a 64-bit integer, as the elements;
        ``ValueError`` otherwise)."""
    def __iter__(self) -> IntIterator: ...
    def __or__(self, other: Bitmap) -> Bitmap: ...
    def __and__(self, other: Bitmap) -> Bitmap: ...
    def __sub__(self, other: Bitmap) -> Bitmap: ...
    def __ior__(self, other: Bitmap) -> Bitmap: ...
    def __iand__(self, other: Bitmap) -> Bitmap: ...
    def __isub__(self, other: Bitmap) -> Bitmap: ...

class TwoBitMap(_IntSet):
    """Two bits per integer of a range: absent, seen once, seen more than once."""

    def add(self, value: int, /) -> int:
        """Records an occurrence; returns the cell before: 0, 1 or 2 (more than once)."""
    def count(self, value: int) -> int:
        """0 (absent), 1 (once) or 2 (more than once)."""
    def singles_len(self) -> int: ...
    def singles(self) -> IntIterator: ...
    def repeated(self) -> IntIterator: ...

def load(path: StrOrBytesPath) -> Union[Filter, Bitmap, TwoBitMap]:
    """Loads a native file of any kind, as the class of that kind."""

def _restore(cls: str, data: bytes) -> Filter: ...

"""Checkpoint serializers: msgpack with an exact allow-list, bounded decoding, optional
encryption, never pickle.

```python
from stepgraph.checkpoint.serde import JsonPlusSerializer

serde = JsonPlusSerializer(allowed_msgpack_modules=[MyState])  # or serde.register(MyState)
blob = serde.dumps_typed({"messages": [...], "when": datetime.now(UTC)})
value = serde.loads_typed(blob)
```

See ``types`` for the allow-list rules, ``_limits`` for what a blob may cost to decode,
``_codec`` for what round-trips exactly, and docs/checkpoint-serialization.md for the
guarantees.
"""

from stepgraph.checkpoint.serde._limits import DecodeLimits
from stepgraph.checkpoint.serde.base import (
    CipherProtocol,
    SerializationError,
    SerializerCompat,
    SerializerProtocol,
    maybe_add_typed_methods,
)
from stepgraph.checkpoint.serde.encrypted import AesEaxCipher, EncryptedSerializer
from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stepgraph.checkpoint.serde.types import SerializedException, TypeRegistry, register_type

__all__ = [
    "AesEaxCipher",
    "CipherProtocol",
    "DecodeLimits",
    "EncryptedSerializer",
    "JsonPlusSerializer",
    "SerializationError",
    "SerializedException",
    "SerializerCompat",
    "SerializerProtocol",
    "TypeRegistry",
    "maybe_add_typed_methods",
    "register_type",
]

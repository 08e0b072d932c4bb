"""Checkpoint serializers: msgpack with an allow-list, optional encryption, never pickle.

```python
from stepgraph.checkpoint.serde import JsonPlusSerializer

serde = JsonPlusSerializer(allowed_modules=["myapp"])  # or serde.register(MyState)
blob = serde.dumps_typed({"messages": [...], "when": datetime.now(UTC)})
value = serde.loads_typed(blob)
```

See ``types`` for the allow-list rules and ``_codec`` for what round-trips exactly.
"""

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

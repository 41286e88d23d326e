"""The project's payload codec (docs/encryption.md, src/codec/aes-gcm-codec.ts) for a Python caller.

A Python service starting sales encrypts what it sends with the same keys as the workers, so the customer never
reaches the history in plain text:

    metadata:  encoding          = "binary/encrypted"
               encryption-key-id = "<key id>"
    data:      IV (12 bytes) || AES-256-GCM ciphertext || tag (16 bytes)

over the whole original payload serialised as the `temporal.api.common.v1.Payload` protobuf (no length prefix):
the layout of Temporal's Python encryption sample, with a key ring instead of its single key. Keys are read as the
workers read them: `PAYLOAD_KEYS` (`<id>:<base64 of 32 bytes>`, comma-separated, oldest first), `PAYLOAD_KEYS_FILE`
(the same one per line, or JSON `[{"id", "key"}]` / `{"keys": [...], "encryptKeyId"}`), `PAYLOAD_KEY_ID` (the key
that encrypts; default the last). Errors name the variable and the key id, never key material.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    PayloadCodec,
)

ENCRYPTED_ENCODING = b"binary/encrypted"
KEY_ID_METADATA_KEY = "encryption-key-id"
IV_BYTES = 12
TAG_BYTES = 16
KEY_BYTES = 32
KEY_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+)$")


class PayloadKeyConfigError(ValueError):
    """A missing or malformed key configuration; the message never holds key material."""


class PayloadDecryptionError(ValueError):
    """A payload this ring cannot decrypt; names the key id, never the payload."""


@dataclasses.dataclass(frozen=True)
class KeyRing:
    """Every key decrypts; `encrypt_key_id` encrypts. `repr` shows ids only."""

    keys: Mapping[str, bytes] = dataclasses.field(repr=False)
    encrypt_key_id: str

    @property
    def ids(self) -> list[str]:
        return list(self.keys)


def _decode_key(where: str, key_id: str, text: str) -> tuple[str, bytes]:
    if not KEY_ID_PATTERN.match(key_id):
        raise PayloadKeyConfigError(f"{where}: the key id must match {KEY_ID_PATTERN.pattern}")
    text = text.strip()
    if not _BASE64.match(text):
        raise PayloadKeyConfigError(f'{where}: key "{key_id}" is not base64')
    # The TS ring accepts standard and URL-safe base64 alike.
    padded = text + "=" * (-len(text) % 4)
    try:
        key = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except binascii.Error as err:
        raise PayloadKeyConfigError(f'{where}: key "{key_id}" is not base64') from err
    if len(key) != KEY_BYTES:
        raise PayloadKeyConfigError(f'{where}: key "{key_id}" is {len(key)} bytes; AES-256 needs exactly {KEY_BYTES}')
    return key_id, key


def parse_key_list(text: str, source: str) -> list[tuple[str, bytes]]:
    """`id:base64` entries separated by commas or newlines; blank entries and `#` lines skipped."""
    entries = [e.strip() for e in re.split(r"[,\n]", text)]
    entries = [e for e in entries if e and not e.startswith("#")]
    keys = []
    for index, entry in enumerate(entries, start=1):
        where = f"{source} entry {index}"
        key_id, colon, key = entry.partition(":")
        if not colon or not key_id:
            raise PayloadKeyConfigError(f"{where} is not in the form <id>:<base64 key>")
        keys.append(_decode_key(where, key_id.strip(), key))
    return keys


def _read_keys_file(path: str) -> tuple[list[tuple[str, bytes]], str | None]:
    source = "PAYLOAD_KEYS_FILE"
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().strip()
    except OSError as err:
        raise PayloadKeyConfigError(f"{source}: cannot read {path} ({err.__class__.__name__})") from None
    if not text.startswith(("[", "{")):
        return parse_key_list(text, source), None
    try:
        parsed = json.loads(text)
    except ValueError:
        raise PayloadKeyConfigError(f"{source}: not valid JSON") from None  # the parser's message quotes the file
    items = parsed if isinstance(parsed, list) else parsed.get("keys") if isinstance(parsed, dict) else None
    encrypt_key_id = parsed.get("encryptKeyId") if isinstance(parsed, dict) else None
    if not isinstance(items, list) or not (encrypt_key_id is None or isinstance(encrypt_key_id, str)):
        raise PayloadKeyConfigError(f'{source}: expected [{{"id": ..., "key": ...}}] or {{"keys": [...], "encryptKeyId"?: ...}}')
    keys = []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("key"), str):
            raise PayloadKeyConfigError(f'{source} entry {index}: expected {{"id": "<id>", "key": "<base64 key>"}}')
        keys.append(_decode_key(f"{source} entry {index}", item["id"], item["key"]))
    return keys, encrypt_key_id


def key_ring_from_env(env: Mapping[str, str] = os.environ) -> KeyRing:
    """The ring the workers would build from the same variables: file keys first, then PAYLOAD_KEYS."""
    file = (env.get("PAYLOAD_KEYS_FILE") or "").strip()
    listed = (env.get("PAYLOAD_KEYS") or "").strip()
    explicit_id = (env.get("PAYLOAD_KEY_ID") or "").strip() or None
    if not file and not listed:
        raise PayloadKeyConfigError("payload encryption needs keys: set PAYLOAD_KEYS or PAYLOAD_KEYS_FILE")
    file_keys, file_encrypt_id = _read_keys_file(file) if file else ([], None)
    keys = file_keys + (parse_key_list(listed, "PAYLOAD_KEYS") if listed else [])
    if not keys:
        raise PayloadKeyConfigError("PAYLOAD_KEYS / PAYLOAD_KEYS_FILE: no keys")
    ring: dict[str, bytes] = {}
    for key_id, key in keys:
        if key_id in ring:
            raise PayloadKeyConfigError(f'payload key ring: key id "{key_id}" is listed twice')
        ring[key_id] = key
    chosen = explicit_id or file_encrypt_id or keys[-1][0]
    if chosen not in ring:
        raise PayloadKeyConfigError(f'PAYLOAD_KEY_ID: no key with id "{chosen}"')
    return KeyRing(keys=ring, encrypt_key_id=chosen)


class SalePayloadCodec(PayloadCodec):
    """Encrypts every payload with the ring's current key; decrypts by the payload's key id; plain payloads pass."""

    def __init__(self, ring: KeyRing) -> None:
        self._ring = ring

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.decrypt(p) if p.metadata.get("encoding") == ENCRYPTED_ENCODING else p for p in payloads]

    def encrypt(self, payload: Payload) -> Payload:
        key_id = self._ring.encrypt_key_id
        iv = os.urandom(IV_BYTES)
        # AESGCM.encrypt returns ciphertext || tag, so the data is IV || ciphertext || tag.
        sealed = AESGCM(self._ring.keys[key_id]).encrypt(iv, payload.SerializeToString(), None)
        return Payload(
            metadata={"encoding": ENCRYPTED_ENCODING, KEY_ID_METADATA_KEY: key_id.encode()},
            data=iv + sealed,
        )

    def decrypt(self, payload: Payload) -> Payload:
        key_id = payload.metadata.get(KEY_ID_METADATA_KEY, b"").decode() or None
        if key_id is None:
            raise PayloadDecryptionError(f"encrypted payload has no {KEY_ID_METADATA_KEY} metadata")
        key = self._ring.keys.get(key_id)
        if key is None:
            raise PayloadDecryptionError(f'payload was encrypted with key "{key_id}", which is not configured')
        if len(payload.data) < IV_BYTES + TAG_BYTES:
            raise PayloadDecryptionError(f'encrypted payload (key "{key_id}") is too short to hold an IV and a tag')
        try:
            plain = AESGCM(key).decrypt(payload.data[:IV_BYTES], payload.data[IV_BYTES:], None)
        except InvalidTag:
            raise PayloadDecryptionError(f'payload failed authentication with key "{key_id}"') from None
        return Payload.FromString(plain)


def encrypted_data_converter(ring: KeyRing) -> DataConverter:
    """The default converter with the codec; failure messages go into an encoded (so encrypted) payload too."""
    return DataConverter(
        payload_codec=SalePayloadCodec(ring),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )

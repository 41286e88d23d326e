"""Runs the Python codec on payloads in the codec server's JSON form, for the interop test.

    python codec_tool.py encode|decode  < {"payloads": [{"metadata": {"<key>": "<base64>"}, "data": "<base64>"}]}

Keys from PAYLOAD_KEYS / PAYLOAD_KEYS_FILE / PAYLOAD_KEY_ID. Prints the result in the same form; a payload that
does not decrypt prints {"error": "<class>", "message": "..."} and exits 1.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys

from temporalio.api.common.v1 import Payload

from sale_codec import PayloadDecryptionError, SalePayloadCodec, key_ring_from_env


def from_json(item: dict) -> Payload:
    metadata = {k: base64.b64decode(v) for k, v in (item.get("metadata") or {}).items()}
    return Payload(metadata=metadata, data=base64.b64decode(item.get("data") or ""))


def to_json(payload: Payload) -> dict:
    return {
        "metadata": {k: base64.b64encode(v).decode() for k, v in payload.metadata.items()},
        "data": base64.b64encode(payload.data).decode(),
    }


async def main(operation: str) -> int:
    codec = SalePayloadCodec(key_ring_from_env())
    payloads = [from_json(p) for p in json.load(sys.stdin)["payloads"]]
    try:
        result = await (codec.encode(payloads) if operation == "encode" else codec.decode(payloads))
    except PayloadDecryptionError as err:
        print(json.dumps({"error": type(err).__name__, "message": str(err)}))
        return 1
    print(json.dumps({"payloads": [to_json(p) for p in result]}))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("encode", "decode"):
        sys.exit("usage: codec_tool.py encode|decode < payloads.json")
    sys.exit(asyncio.run(main(sys.argv[1])))

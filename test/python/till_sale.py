"""A till in Python: one sale end to end through the Temporal Python SDK, as docs/starting-sales.md tells a caller
in another language to do it.

    python till_sale.py < {"sale": <SaleInput>, "refund": <refund request>, "invalidSale"?: <a bad input>}

1. checks the sale input against the published JSON Schema (SALE_INPUT_SCHEMA, docs/schemas/sale-input.schema.json);
2. starts the sale and waits for its receipt in ONE call: update-with-start of the `awaitReceipt` update
   (workflow `saleWorkflow`, id `sale:<businessId>:<traderInvoiceNumber>`, conflict policy USE_EXISTING), every
   payload encrypted with the workers' keys (PAYLOAD_KEYS / PAYLOAD_KEYS_FILE, see sale_codec.py);
3. asks again with the same input (the same sale answers), then with another input (refused: a conflict), and
   with an input the schema would have refused, when given (refused by the workflow);
4. reads the sale's state (query `getState`), refunds it with the `refund` update and waits for it to close;
5. asks once more: a closed sale is not started again (WorkflowAlreadyStartedError); its result is read instead.

Connection: TEMPORAL_ADDRESS (127.0.0.1:7233), TEMPORAL_NAMESPACE (default), SALES_TASK_QUEUE (sales). Prints one
JSON object on standard output; exits 1 (the error as JSON) when a step that should work does not.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import sys
from typing import Any

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import (
    Priority,
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import ApplicationError, FailureError, WorkflowAlreadyStartedError

from sale_codec import encrypted_data_converter, key_ring_from_env

SALE_WORKFLOW_TYPE = "saleWorkflow"
AWAIT_RECEIPT_UPDATE = "awaitReceipt"
REFUND_UPDATE = "refund"


def sale_workflow_id(sale: dict[str, Any]) -> str:
    return f"sale:{sale['businessId']}:{sale['traderInvoiceNumber']}"


def check_against_schema(sale: dict[str, Any]) -> str | None:
    """Refuses an input the workflow would refuse, before anything is sent. None when no schema is configured."""
    path = os.environ.get("SALE_INPUT_SCHEMA")
    if not path:
        return None
    import jsonschema  # only needed when a schema is given

    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator_class(schema, format_checker=validator_class.FORMAT_CHECKER).validate(sale)
    return path


def sale_search_attributes(sale: dict[str, Any]) -> TypedSearchAttributes:
    """What the TypeScript client sets at start, so the sale is found at once (the workflow keeps them up to date)."""
    return TypedSearchAttributes(
        [
            SearchAttributePair(SearchAttributeKey.for_keyword("BusinessId"), sale["businessId"]),
            SearchAttributePair(SearchAttributeKey.for_keyword("TraderInvoiceNumber"), sale["traderInvoiceNumber"]),
            SearchAttributePair(SearchAttributeKey.for_keyword("FiscalStatus"), "pending"),
            SearchAttributePair(SearchAttributeKey.for_bool("NeedsAttention"), False),
        ]
    )


async def await_receipt(client: Client, sale: dict[str, Any], task_queue: str, wait: str = "30 seconds") -> Any:
    """Starts the sale, or finds it running, and waits up to `wait` for its receipt: one round trip."""
    start = WithStartWorkflowOperation(
        SALE_WORKFLOW_TYPE,
        sale,
        id=sale_workflow_id(sale),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        # A finished sale is never filed again: a start of its invoice number finds it and starts nothing.
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        search_attributes=sale_search_attributes(sale),
        # A till waits: its workflow tasks go ahead of background work, fairly between businesses.
        priority=Priority(priority_key=1, fairness_key=sale["businessId"]),
    )
    # `input` makes the update refuse a sale already started under this number with another input.
    return await client.execute_update_with_start_workflow(
        AWAIT_RECEIPT_UPDATE, {"wait": wait, "input": sale}, start_workflow_operation=start
    )


def failure_of(err: BaseException) -> dict[str, Any]:
    """The failure a caller branches on: the workflow's ApplicationError type and message, under the SDK's wrapper."""
    cause: BaseException = err
    # WorkflowUpdateFailedError.cause, then the chain of FailureErrors (e.g. an ActivityError) down to the workflow's own.
    while not isinstance(cause, ApplicationError):
        inner = getattr(cause, "cause", None) if isinstance(cause, WorkflowUpdateFailedError) else cause.__cause__
        if not isinstance(inner, FailureError):
            break
        cause = inner
    return {
        "error": type(err).__name__,
        "type": cause.type if isinstance(cause, ApplicationError) else None,
        "nonRetryable": cause.non_retryable if isinstance(cause, ApplicationError) else None,
        "message": cause.message if isinstance(cause, FailureError) else str(cause),
        "details": [d for d in cause.details] if isinstance(cause, ApplicationError) else [],
    }


async def main() -> int:
    plan = json.load(sys.stdin)
    sale: dict[str, Any] = plan["sale"]
    refund: dict[str, Any] = plan["refund"]
    task_queue = os.environ.get("SALES_TASK_QUEUE", "sales")
    out: dict[str, Any] = {"workflowId": sale_workflow_id(sale), "schema": check_against_schema(sale)}

    client = await Client.connect(
        os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
        namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
        data_converter=encrypted_data_converter(key_ring_from_env()),
    )

    out["receipt"] = await await_receipt(client, sale, task_queue)
    out["again"] = await await_receipt(client, sale, task_queue)

    changed = copy.deepcopy(sale)
    changed["lines"][0]["quantity"] += 1
    changed["customer"]["name"] = changed["customer"].get("name", "") + " (another)"
    try:
        out["conflict"] = {"unexpectedAnswer": await await_receipt(client, changed, task_queue)}
    except WorkflowUpdateFailedError as err:
        out["conflict"] = failure_of(err)

    # What a caller that skipped the schema sees: the workflow checks its own input and refuses the update.
    if "invalidSale" in plan:
        try:
            out["invalid"] = {"unexpectedAnswer": await await_receipt(client, plan["invalidSale"], task_queue)}
        except Exception as err:  # noqa: BLE001 — recorded for the test, whatever it is
            out["invalid"] = failure_of(err)
        # The same invoice number again, now with lines: is the number still usable after a refused input?
        corrected = {**plan["invalidSale"], "lines": sale["lines"]}
        try:
            out["corrected"] = {"answer": await await_receipt(client, corrected, task_queue)}
        except Exception as err:  # noqa: BLE001
            out["corrected"] = {"error": type(err).__name__}

    handle = client.get_workflow_handle(sale_workflow_id(sale))
    # Refunded at once, right after the receipt: the sale takes it even while its stock is still being reported.
    out["state"] = await handle.query("getState")
    # The update id names the credit note: sending the same refund again returns the first answer.
    out["refund"] = await handle.execute_update(REFUND_UPDATE, refund, id=f"refund:{refund['traderInvoiceNumber']}")
    out["result"] = await handle.result()
    # A closed sale takes no update, and REJECT_DUPLICATE refuses to start it again: the caller reads its result.
    try:
        out["afterClose"] = {"unexpectedAnswer": await await_receipt(client, sale, task_queue)}
    except WorkflowAlreadyStartedError as err:
        out["afterClose"] = {"error": type(err).__name__, "closedResult": await handle.result()}
    print(json.dumps(out))
    return 0


def exit_now(code: int) -> None:
    """Leaves without interpreter teardown, after flushing what was printed.

    The client's Rust threads can outlive the event loop and abort the interpreter while it finalises ("Fatal Python
    error: PyGILState_Release", SIGABRT; temporalio/sdk-python#300, still open): the till's work is done and printed
    by then, so its exit code must not depend on that race.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    try:
        exit_now(asyncio.run(main()))
    except Exception as err:  # noqa: BLE001 — the test reads the failure as JSON
        print(json.dumps({"failed": failure_of(err)}))
        exit_now(1)

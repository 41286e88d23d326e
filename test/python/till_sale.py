"""A till in Python: one sale end to end through the Temporal Python SDK, as docs/starting-sales.md tells a caller
in another language to do it.

    python till_sale.py < {"sale": <SaleInput>, "refund": <refund request>, "invalidSale"?: <a bad input>}

1. checks the sale input against the published JSON Schema (SALE_INPUT_SCHEMA, docs/schemas/sale-input.schema.json);
2. starts the sale and waits for its receipt in ONE call: update-with-start of the `awaitReceipt` update
   (workflow `saleWorkflow`, id `sale:<businessId>:<traderInvoiceNumber>`, conflict policy USE_EXISTING), every
   payload encrypted with the workers' keys (PAYLOAD_KEYS / PAYLOAD_KEYS_FILE, see sale_codec.py);
3. asks again with the same input (the same sale answers, from its result once it has closed), then with another
   input (refused: a conflict, by the workflow or, once closed, against its started input), and with an input the
   schema would have refused, when given (refused by the workflow);
4. waits for the sale to close (it does once signed and its stock handed over), then refunds it: update-with-start
   of the `refund` update on the sale's refund workflow (`refundWorkflow`, id `refund:<businessId>:<tin>`), once,
   then the same request again (the same credit note answers);
5. asks for the receipt twice more, after the sale closed: a closed sale is not started again
   (WorkflowAlreadyStartedError), and `receipt_of` reads its result instead: the same receipt, one call for the till.

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
REFUND_WORKFLOW_TYPE = "refundWorkflow"


def sale_workflow_id(sale: dict[str, Any]) -> str:
    return f"sale:{sale['businessId']}:{sale['traderInvoiceNumber']}"


def refund_workflow_id(sale: dict[str, Any]) -> str:
    return f"refund:{sale['businessId']}:{sale['traderInvoiceNumber']}"


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


def differences(started: Any, asked: Any, path: str = "") -> list[str]:
    """The paths where two inputs differ (`lines[0].quantity`), never their values: as the workflow names them."""
    if started == asked:
        return []
    if isinstance(started, list) and isinstance(asked, list) and len(started) == len(asked):
        return [d for i, (x, y) in enumerate(zip(started, asked)) for d in differences(x, y, f"{path}[{i}]")]
    if isinstance(started, (dict, type(None))) and isinstance(asked, (dict, type(None))):
        x, y = started or {}, asked or {}
        return [d for k in sorted(set(x) | set(y)) for d in differences(x.get(k), y.get(k), f"{path}.{k}" if path else k)]
    return [path or "(input)"]


class SaleInputConflict(Exception):
    """The invoice number was started with another input: the differing fields are named."""

    def __init__(self, fields: list[str]) -> None:
        super().__init__(f"the sale was started with another input: {', '.join(fields)} differ")
        self.fields = fields


async def receipt_of(client: Client, sale: dict[str, Any], task_queue: str) -> Any:
    """The till's one call: the receipt of a running sale from the update, of a closed one from its result."""
    try:
        return await await_receipt(client, sale, task_queue)
    except WorkflowAlreadyStartedError:
        handle = client.get_workflow_handle(sale_workflow_id(sale))
        # A closed sale is not asked: its started input, read from its history, must be this one.
        history = await handle.fetch_history()
        payloads = history.events[0].workflow_execution_started_event_attributes.input.payloads
        [started] = await client.data_converter.decode(payloads)
        fields = differences(started, sale)
        if fields:
            raise SaleInputConflict(fields)
        state = await handle.result()
        signed = state["sale"] is not None and state["sale"]["status"] == "completed" and state["sale"]["receipt"]
        return {
            "signed": bool(signed),
            "receipt": state["sale"]["receipt"] if signed else None,
            "reason": None if signed else f"the sale ended unsigned (step {state['step']})",
            "state": state,
        }


async def refund_sale(client: Client, sale: dict[str, Any], refund: dict[str, Any], task_queue: str) -> Any:
    """Starts the sale's refund workflow, or finds it, and waits for its credit note; once closed, reads its result."""
    start = WithStartWorkflowOperation(
        REFUND_WORKFLOW_TYPE,
        {"businessId": sale["businessId"], "traderInvoiceNumber": sale["traderInvoiceNumber"], "request": refund},
        id=refund_workflow_id(sale),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        # A refused refund may be asked again; a completed one is the sale's only credit note.
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        priority=Priority(priority_key=1, fairness_key=sale["businessId"]),
    )
    # The update id names the credit note: sending the same refund again returns the first answer.
    try:
        return await client.execute_update_with_start_workflow(
            REFUND_UPDATE, refund, start_workflow_operation=start, id=f"refund:{refund['traderInvoiceNumber']}"
        )
    except WorkflowAlreadyStartedError:
        # Completed: its result is the credit note (a caller compares the request it started with, as ours does).
        return await client.get_workflow_handle(refund_workflow_id(sale)).result()


def failure_of(err: BaseException) -> dict[str, Any]:
    """The failure a caller branches on: the workflow's ApplicationError type and message, under the SDK's wrapper."""
    cause: BaseException = err
    # WorkflowUpdateFailedError.cause, then the chain of FailureErrors (e.g. an ActivityError) down to the workflow's own.
    while not isinstance(cause, ApplicationError):
        inner = getattr(cause, "cause", None) if isinstance(cause, WorkflowUpdateFailedError) else cause.__cause__
        if not isinstance(inner, FailureError):
            break
        cause = inner
    if isinstance(err, SaleInputConflict):
        return {
            "error": type(err).__name__,
            "type": "sale_input_conflict",
            "nonRetryable": True,
            "message": str(err),
            "details": [{"fields": err.fields}],
        }
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
    # Seconds later the sale has closed (signed, its stock handed over): the same call answers from its result.
    out["again"] = await receipt_of(client, sale, task_queue)

    changed = copy.deepcopy(sale)
    changed["lines"][0]["quantity"] += 1
    changed["customer"]["name"] = changed["customer"].get("name", "") + " (another)"
    try:
        out["conflict"] = {"unexpectedAnswer": await receipt_of(client, changed, task_queue)}
    except (WorkflowUpdateFailedError, SaleInputConflict) as err:
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
    # Signed and its stock handed over, the sale closes by itself: its result is the signed record.
    out["result"] = await handle.result()
    out["refund"] = await refund_sale(client, sale, refund, task_queue)
    out["refundAgain"] = await refund_sale(client, sale, refund, task_queue)
    out["refundState"] = await client.get_workflow_handle(refund_workflow_id(sale)).query("getState")
    # A closed sale takes no update, and REJECT_DUPLICATE refuses to start it again: its result answers, twice.
    try:
        out["afterClose"] = {"unexpectedAnswer": await await_receipt(client, sale, task_queue)}
    except WorkflowAlreadyStartedError as err:
        out["afterClose"] = {"error": type(err).__name__}
    out["askedAgain"] = [await receipt_of(client, sale, task_queue), await receipt_of(client, sale, task_queue)]
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

/**
 * What the project assumed about a result callback's request, where the contract is silent (compliance-api.md,
 * Events 3: "Callback request body, headers, signing and retry schedule: not shown"; the assumption is C45). This
 * is the one place those assumptions live, and nothing depends on them: the URL's token names the execution, and
 * the workflow confirms by reading its document, so a valid token with a body of any shape, or none, is a hint.
 * When the fields named here are present they sharpen de-duplication and show in logs; `none` reads none of
 * them (CALLBACK_BODY_FIELDS=none), for a service whose bodies use these names for something else.
 */

/** A path into a JSON body, e.g. `['data', 'sale', 'id']`. */
export type JsonPath = readonly string[];

export interface CallbackBodyFields {
  /** The document the callback is about; the first path that holds an identifier wins. */
  readonly documentId: readonly JsonPath[];
  /** The outcome, e.g. `sale.completed`. */
  readonly event: readonly JsonPath[];
  /** The delivery's own id, the same on every attempt of one delivery. */
  readonly callbackId: readonly JsonPath[];
  /** Headers (lower-case) that carry the delivery id when the body has none. */
  readonly callbackIdHeaders: readonly string[];
}

/** C45: `{id, event, createdAt, data: {sale}}`, `x-callback-id`; `data` being the document itself is read too. */
export const ASSUMED_BODY_FIELDS: CallbackBodyFields = {
  documentId: [
    ['data', 'sale', 'id'],
    ['data', 'id'],
  ],
  event: [['event']],
  callbackId: [['id']],
  callbackIdHeaders: ['x-callback-id'],
};

/** Reads nothing: every callback is an anonymous hint, de-duplicated by its bytes and throttled per workflow. */
export const NO_BODY_FIELDS: CallbackBodyFields = {
  documentId: [],
  event: [],
  callbackId: [],
  callbackIdHeaders: [],
};

export const CALLBACK_BODY_FIELD_SETTINGS = ['assumed', 'none'] as const;
export type CallbackBodyFieldSetting = (typeof CALLBACK_BODY_FIELD_SETTINGS)[number];

export function callbackBodyFields(setting: CallbackBodyFieldSetting = 'assumed'): CallbackBodyFields {
  return setting === 'none' ? NO_BODY_FIELDS : ASSUMED_BODY_FIELDS;
}

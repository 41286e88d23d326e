/**
 * What the project assumed of a result callback's body where the contract is silent (C45). Nothing depends on it:
 * the token names the execution and the workflow reads its document. Present fields sharpen de-duplication and
 * show in logs; CALLBACK_BODY_FIELDS=none reads none, for a service whose bodies use these names otherwise.
 */

/** A path into a JSON body, e.g. `['data', 'sale', 'id']`. */
export type JsonPath = readonly string[];

/** Paths to each field (the first that holds an identifier wins), and headers carrying the delivery id. */
export interface CallbackBodyFields {
  readonly documentId: readonly JsonPath[];
  readonly event: readonly JsonPath[];
  readonly callbackId: readonly JsonPath[];
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

export type CallbackBodyFieldSetting = 'assumed' | 'none';

/** 'none': every callback is an anonymous hint, de-duplicated by its bytes and throttled per workflow. */
export function callbackBodyFields(setting: CallbackBodyFieldSetting = 'assumed'): CallbackBodyFields {
  return setting === 'none'
    ? { documentId: [], event: [], callbackId: [], callbackIdHeaders: [] }
    : ASSUMED_BODY_FIELDS;
}

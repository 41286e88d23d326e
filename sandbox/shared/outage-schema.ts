import { z } from 'zod';

/**
 * What an outage is, as the fixture and the inspection APIs take it. A service outage takes a whole service down
 * (503 or dropped connections); an authority outage leaves the compliance service up but its tax authority
 * unreachable, so only the submissions of sales and credit notes are affected.
 */

const isoDateTime = z.iso.datetime({ offset: true, message: 'must be an ISO date-time such as 2025-06-01T12:00:00Z' });

const common = {
  id: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9_.:-]+$/, 'must be 1-100 letters, digits, _ . : or -')
    .optional()
    .describe('Outage id; assigned when absent. Adding an outage with a known id replaces (and so ends) the old one'),
  startsAt: isoDateTime.optional().describe('When the outage starts; absent: now (or startInMs from now)'),
  endsAt: isoDateTime.optional().describe('When the outage ends; absent: durationMs after the start, or never'),
  startInMs: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('The outage starts this long after it is added (a fixture outage: after the sandbox starts or resets)'),
  durationMs: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('How long the outage lasts from its start; with neither this nor endsAt it lasts until deleted'),
  message: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('The error message of the 503, or the cause message of the documents an authority outage fails'),
};

const ServiceOutageSchema = z
  .strictObject({
    kind: z.literal('service'),
    service: z
      .enum(['compliance', 'accounting'])
      .optional()
      .describe(
        'The service that is down; default: the service whose /__sandbox/outages received it (compliance in a fixture)',
      ),
    mode: z
      .enum(['unavailable', 'refuse'])
      .default('unavailable')
      .describe('unavailable: every route answers 503 service_unavailable; refuse: every connection is dropped'),
    retryAfterSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .optional()
      .describe('Retry-After of the 503; default the seconds left of the outage, at most 5 (5 when it has no end)'),
    ...common,
  })
  .describe('The whole service is down; its /__sandbox routes still answer');

const AuthorityOutageSchema = z
  .strictObject({
    kind: z.literal('authority'),
    service: z.literal('compliance').optional().describe('Only the compliance service talks to the tax authority'),
    mode: z
      .enum(['reject', 'in_flight'])
      .default('reject')
      .describe(
        'reject: every sale and credit-note submission (creation and retry) fails at once with cause ' +
          'authority_unavailable (422); in_flight: it is accepted as in flight (202) and fails with cause ' +
          'authority_unavailable when the outage ends, so the client must resubmit',
      ),
    ...common,
  })
  .describe('The tax authority is unreachable: submissions fail; reads, items and stock keep working');

export const OutageSchema = z
  .discriminatedUnion('kind', [ServiceOutageSchema, AuthorityOutageSchema])
  .superRefine((outage, ctx) => {
    if (outage.startsAt !== undefined && outage.startInMs !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['startInMs'], message: 'give startsAt or startInMs, not both' });
    }
    if (outage.endsAt !== undefined && outage.durationMs !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['durationMs'], message: 'give endsAt or durationMs, not both' });
    }
    if (
      outage.startsAt !== undefined &&
      outage.endsAt !== undefined &&
      Date.parse(outage.endsAt) <= Date.parse(outage.startsAt)
    ) {
      ctx.addIssue({ code: 'custom', path: ['endsAt'], message: 'must be after startsAt' });
    }
  })
  .describe('An outage of a sandbox service or of the tax authority, from a start to an end');

export type OutageInput = z.input<typeof OutageSchema>;
export type ParsedOutage = z.output<typeof OutageSchema>;

/** Fixture outages with unique ids. */
export const OutageListSchema = z
  .array(OutageSchema)
  .superRefine((outages, ctx) => {
    const seen = new Set<string>();
    outages.forEach((outage, index) => {
      if (outage.id === undefined) return;
      if (seen.has(outage.id))
        ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `duplicate id ${outage.id}` });
      seen.add(outage.id);
    });
  })
  .default([]);

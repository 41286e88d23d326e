import { randomInt } from 'node:crypto';

/** Values the tax authority signs onto an accepted document (contract decision C32). */
export interface ReceiptValues {
  cuInvoiceNo: string;
  receiptNumber: number;
  receiptLabel: 'NS' | 'NC';
  scuId: string;
  scuDate: string;
  scuTime: string;
  totalReceiptCounter: string;
  signature: string;
  internalData: string;
  verificationUrl: string;
  originalCuInvoiceNo: string | null;
}

const DEFAULT_VERIFICATION_HOST = 'etims-sbx.kra.go.ke';

const SCU_SERIAL_DIGITS = 10;
const SIGNATURE_LENGTH = 16;
const INTERNAL_DATA_LENGTH = 26;
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
// Africa/Nairobi has been UTC+3 without daylight saving since 1960, so a fixed offset is exact.
const NAIROBI_OFFSET_MS = 3 * 60 * 60 * 1000;

/** 'KRACU' + 10 digits, e.g. 100000001 → KRACU0100000001. */
export function formatScuId(serial: number): string {
  if (!Number.isSafeInteger(serial) || serial < 0 || serial >= 10 ** SCU_SERIAL_DIGITS) {
    throw new RangeError(`scu serial must be an integer from 0 to ${10 ** SCU_SERIAL_DIGITS - 1}, got ${serial}`);
  }
  return `KRACU${String(serial).padStart(SCU_SERIAL_DIGITS, '0')}`;
}

export interface BuildReceiptInput {
  documentType: 'sale' | 'credit_note';
  businessPin: string;
  authorityBhfId: string;
  scuId: string;
  receiptNumber: number;
  totalReceiptCounter: number;
  signedAt: Date;
  originalCuInvoiceNo?: string | null;
  verificationHost?: string;
  /** Source of the signature characters, in [0, 1); a seeded one makes receipts reproducible. */
  random?: () => number;
}

export function buildReceipt(input: BuildReceiptInput): ReceiptValues {
  assertPositiveInteger(input.receiptNumber, 'receiptNumber');
  assertPositiveInteger(input.totalReceiptCounter, 'totalReceiptCounter');
  if (Number.isNaN(input.signedAt.getTime())) throw new RangeError('signedAt must be a valid date');
  const pick = input.random ? pickWith(input.random) : (size: number) => randomInt(size);
  const signature = randomBase32(SIGNATURE_LENGTH, pick);
  const internalData = randomBase32(INTERNAL_DATA_LENGTH, pick);
  const host = input.verificationHost ?? DEFAULT_VERIFICATION_HOST;
  const { date, time } = nairobiDateTime(input.signedAt);
  const data = `${input.businessPin}${input.authorityBhfId}${signature}`;
  return {
    cuInvoiceNo: `${input.scuId}/${input.receiptNumber}`,
    receiptNumber: input.receiptNumber,
    receiptLabel: input.documentType === 'credit_note' ? 'NC' : 'NS',
    scuId: input.scuId,
    scuDate: date,
    scuTime: time,
    totalReceiptCounter: String(input.totalReceiptCounter),
    signature,
    internalData,
    verificationUrl: `https://${host}/common/link/etims/receipt/indexEtimsReceiptData?Data=${encodeURIComponent(data)}`,
    originalCuInvoiceNo: input.originalCuInvoiceNo ?? null,
  };
}

/** `DD/MM/YYYY` and `hh:mm:ss` (24-hour) as printed in Nairobi. */
export function nairobiDateTime(at: Date): { date: string; time: string } {
  const local = new Date(at.getTime() + NAIROBI_OFFSET_MS);
  const two = (n: number) => String(n).padStart(2, '0');
  return {
    date: `${two(local.getUTCDate())}/${two(local.getUTCMonth() + 1)}/${String(local.getUTCFullYear()).padStart(4, '0')}`,
    time: `${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())}`,
  };
}

function assertPositiveInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
}

function pickWith(random: () => number): (size: number) => number {
  return (size) => {
    const r = random();
    if (!(r >= 0 && r < 1)) throw new RangeError(`random() must return a number in [0, 1), got ${r}`);
    return Math.floor(r * size);
  };
}

function randomBase32(length: number, pick: (size: number) => number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE32_ALPHABET[pick(BASE32_ALPHABET.length)];
  return out;
}

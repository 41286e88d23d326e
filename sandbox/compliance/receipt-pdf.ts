import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import type { ReceiptValues } from './receipts.js';

/** The parts of a Sale (or credit note) printed on its receipt. */
interface ReceiptPdfDocument {
  type: 'sale' | 'credit_note' | string;
  traderInvoiceNumber: string;
  saleDate: string | null;
  customer?: { name?: string | null; pin?: string | null } | null;
  lines: ReadonlyArray<{
    name: string | null;
    description?: string | null;
    quantity: number;
    unitPrice: number;
    total: number;
    taxTypeCode: string | null;
    taxAmount: number;
  }>;
  totals: { total: number; taxableAmount: number; taxAmount: number };
  receipt: ReceiptValues;
}

export interface ReceiptPdfInput {
  businessName: string;
  businessPin: string;
  branchName: string;
  document: ReceiptPdfDocument;
}

const PAGE_WIDTH = 298; // 105 mm, a receipt-roll-like page
const MARGIN = 18;
const CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN;
const QR_SIZE = 120;
const LABEL_SHARE = 0.4;
const FONT = 'Helvetica';
const FONT_BOLD = 'Helvetica-Bold';

/**
 * A small real PDF of a signed receipt: header, lines, totals, the eTIMS receipt values and a QR code
 * of the verification URL. Uncompressed so the printed values can be found in the bytes.
 */
export async function renderReceiptPdf(input: ReceiptPdfInput): Promise<Buffer> {
  const { document: sale } = input;
  const receipt = sale.receipt;
  const isCreditNote = sale.type === 'credit_note';
  const qr = QRCode.create(receipt.verificationUrl, { errorCorrectionLevel: 'M' });

  const pdf = new PDFDocument({
    size: [PAGE_WIDTH, pageHeight(sale.lines.length)],
    margin: MARGIN,
    compress: false,
    info: {
      Title: `${isCreditNote ? 'Credit note' : 'Sale'} ${sale.traderInvoiceNumber}`,
      Subject: `CU invoice ${receipt.cuInvoiceNo}`,
      Author: input.businessName,
      Keywords: `${receipt.cuInvoiceNo} ${sale.traderInvoiceNumber}`,
      Creator: 'eTIMS sandbox',
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });

  pdf.font(FONT_BOLD).fontSize(12).text(input.businessName, { align: 'center' });
  pdf.font(FONT).fontSize(8);
  pdf.text(`PIN: ${input.businessPin}`, { align: 'center' });
  pdf.text(input.branchName, { align: 'center' });
  pdf.moveDown(0.5);
  pdf
    .font(FONT_BOLD)
    .fontSize(10)
    .text(isCreditNote ? 'CREDIT NOTE' : 'TAX INVOICE', { align: 'center' });
  pdf.font(FONT).fontSize(8).moveDown(0.5);
  pdf.text(`Invoice number: ${sale.traderInvoiceNumber}`);
  if (sale.saleDate) pdf.text(`Date: ${sale.saleDate}`);
  if (sale.customer?.name) pdf.text(`Customer: ${sale.customer.name}`);
  if (sale.customer?.pin) pdf.text(`Customer PIN: ${sale.customer.pin}`);
  if (receipt.originalCuInvoiceNo) pdf.text(`Original CU invoice: ${receipt.originalCuInvoiceNo}`);
  rule(pdf);

  for (const line of sale.lines) {
    pdf.text(`${line.name ?? line.description ?? '(item)'}`);
    twoColumns(
      pdf,
      `${line.quantity} x ${unitPrice(line.unitPrice)}`,
      `${money(line.total)} ${line.taxTypeCode ?? ''}`.trim(),
    );
  }
  rule(pdf);
  pdf.font(FONT_BOLD);
  twoColumns(pdf, 'TOTAL', money(sale.totals.total));
  pdf.font(FONT);
  twoColumns(pdf, 'Taxable amount', money(sale.totals.taxableAmount));
  twoColumns(pdf, 'Tax', money(sale.totals.taxAmount));
  rule(pdf);

  pdf.font(FONT_BOLD).text('SCU INFORMATION', { align: 'center' });
  pdf.font(FONT);
  twoColumns(pdf, 'SCU ID', receipt.scuId);
  twoColumns(pdf, 'Date', `${receipt.scuDate} ${receipt.scuTime}`);
  twoColumns(pdf, 'CU invoice no.', `${receipt.cuInvoiceNo} ${receipt.receiptLabel}`);
  twoColumns(
    pdf,
    'Receipt number',
    `${receipt.receiptNumber} / ${receipt.totalReceiptCounter} ${receipt.receiptLabel}`,
  );
  stacked(pdf, 'Internal data', receipt.internalData);
  stacked(pdf, 'Receipt signature', receipt.signature);
  pdf.moveDown(0.5);

  drawQr(pdf, qr.modules, (PAGE_WIDTH - QR_SIZE) / 2, pdf.y, QR_SIZE);
  pdf.y += QR_SIZE + 6;
  pdf.fontSize(6).text(receipt.verificationUrl, MARGIN, pdf.y, { align: 'center', width: CONTENT_WIDTH });

  pdf.end();
  return done;
}

// Header, totals and SCU block take about 290 pt and each line two rows; a line whose name wraps
// can still spill onto a second page, which pdfkit adds by itself.
function pageHeight(lineCount: number): number {
  return 330 + QR_SIZE + lineCount * 22;
}

function money(value: number): string {
  return value.toFixed(2);
}

/** Unit prices may carry more than cents (33.335); print them whole rather than rounded. */
function unitPrice(value: number): string {
  return Number.isInteger(value * 100) ? value.toFixed(2) : String(value);
}

function rule(pdf: PDFKit.PDFDocument): void {
  pdf.moveDown(0.3);
  pdf
    .moveTo(MARGIN, pdf.y)
    .lineTo(PAGE_WIDTH - MARGIN, pdf.y)
    .lineWidth(0.5)
    .stroke();
  pdf.moveDown(0.3);
}

function twoColumns(pdf: PDFKit.PDFDocument, left: string, right: string): void {
  const y = pdf.y;
  const labelWidth = CONTENT_WIDTH * LABEL_SHARE;
  pdf.text(left, MARGIN, y, { width: labelWidth, lineBreak: false });
  pdf.text(right, MARGIN + labelWidth, y, { width: CONTENT_WIDTH - labelWidth, align: 'right' });
  pdf.x = MARGIN;
}

/** A label with its value on the next line across the full width, for codes too long for a column. */
function stacked(pdf: PDFKit.PDFDocument, label: string, value: string): void {
  pdf.text(label, MARGIN, pdf.y, { width: CONTENT_WIDTH });
  pdf.text(value, MARGIN, pdf.y, { width: CONTENT_WIDTH, align: 'right' });
}

/** Draws the QR modules as filled rectangles (one per horizontal run), so the code stays sharp at any zoom. */
function drawQr(pdf: PDFKit.PDFDocument, modules: QRCode.BitMatrix, x: number, y: number, size: number): void {
  const cell = size / modules.size;
  for (let row = 0; row < modules.size; row++) {
    let col = 0;
    while (col < modules.size) {
      if (!modules.get(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < modules.size && modules.get(row, col)) col++;
      pdf.rect(x + start * cell, y + row * cell, (col - start) * cell, cell);
    }
  }
  pdf.fillColor('black').fill();
}

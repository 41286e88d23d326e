/** Tax authority code lists and item classifications served by the lookups (C24), after the eTIMS code tables. */

interface Code {
  code: string;
  name: string;
  description?: string;
}

export interface CodeList {
  id: string;
  name: string;
  codes: Code[];
}

export const CODE_LISTS: readonly CodeList[] = [
  {
    id: 'taxType',
    name: 'Tax type',
    codes: [
      { code: 'A', name: 'Exempt', description: '0 %' },
      { code: 'B', name: 'Standard rate', description: '16 %' },
      { code: 'C', name: 'Zero rated', description: '0 %' },
      { code: 'D', name: 'Non-VAT', description: '0 %' },
      { code: 'E', name: 'Reduced rate', description: '8 %' },
    ],
  },
  {
    id: 'productType',
    name: 'Product type',
    codes: [
      { code: '1', name: 'Raw material' },
      { code: '2', name: 'Finished product' },
      { code: '3', name: 'Service' },
    ],
  },
  {
    id: 'quantityUnit',
    name: 'Quantity unit',
    codes: [
      { code: 'U', name: 'Pieces / item' },
      { code: 'KG', name: 'Kilogram' },
      { code: 'L', name: 'Litre' },
      { code: 'M', name: 'Metre' },
      { code: 'BX', name: 'Box' },
    ],
  },
  {
    id: 'packagingUnit',
    name: 'Packaging unit',
    codes: [
      { code: 'NT', name: 'Net' },
      { code: 'BX', name: 'Box' },
      { code: 'BG', name: 'Bag' },
      { code: 'BT', name: 'Bottle' },
      { code: 'CT', name: 'Carton' },
    ],
  },
  {
    id: 'paymentType',
    name: 'Payment type',
    codes: [
      { code: '01', name: 'Cash' },
      { code: '02', name: 'Credit' },
      { code: '03', name: 'Cash / credit' },
      { code: '04', name: 'Bank cheque' },
      { code: '05', name: 'Debit and credit card' },
      { code: '06', name: 'Mobile money' },
      { code: '07', name: 'Other' },
    ],
  },
  {
    id: 'creditNoteReason',
    name: 'Credit note reason',
    codes: [
      { code: '01', name: 'Missing quantity' },
      { code: '02', name: 'Missing data' },
      { code: '03', name: 'Damaged' },
      { code: '04', name: 'Wasted' },
      { code: '05', name: 'Raw material shortage' },
      { code: '06', name: 'Refund' },
    ],
  },
];

export interface ItemClassification {
  code: string;
  name: string;
  taxTypeCode: string;
  level: number;
}

export const ITEM_CLASSIFICATIONS: readonly ItemClassification[] = [
  { code: '5010150100', name: 'Fresh milk', taxTypeCode: 'A', level: 4 },
  { code: '5016150100', name: 'Sugar', taxTypeCode: 'B', level: 4 },
  { code: '5015150100', name: 'Edible vegetable oils', taxTypeCode: 'B', level: 4 },
  { code: '1011150000', name: 'Seeds and bulbs', taxTypeCode: 'C', level: 3 },
  { code: '1511150000', name: 'Liquefied petroleum gas', taxTypeCode: 'E', level: 3 },
  { code: '5310270000', name: 'Bath and body soaps', taxTypeCode: 'B', level: 3 },
  { code: '5017190000', name: 'Spices and extracts', taxTypeCode: 'B', level: 3 },
  { code: '5019210000', name: 'Prepared snacks', taxTypeCode: 'B', level: 3 },
  { code: '8414160000', name: 'Gift vouchers', taxTypeCode: 'D', level: 3 },
  { code: '5022110000', name: 'Bread and bakery products', taxTypeCode: 'B', level: 3 },
  { code: '5020230000', name: 'Bottled water', taxTypeCode: 'B', level: 3 },
  { code: '7810180000', name: 'Delivery services', taxTypeCode: 'B', level: 3 },
];

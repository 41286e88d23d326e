/** Codes checked against the service's code lists (C24), read once per file: a wrong code costs no request. */
import type { ComplianceClient } from '../compliance/client.js';
import type { CatalogueRow } from '../contracts/catalogue-import.js';
import type { CatalogueProblem, ReadCatalogue } from './rows.js';

/** The code list (C24 `listId`) of each coded column. */
const CODED_COLUMNS = {
  taxTypeCode: 'taxType',
  productTypeCode: 'productType',
  unitCode: 'quantityUnit',
  packagingUnitCode: 'packagingUnit',
} as const satisfies Partial<Record<keyof CatalogueRow, string>>;

export interface ServiceCodes {
  /** Codes by list id; a list the service does not have is absent, and its column is not checked. */
  lists: Map<string, Set<string>>;
  classifications: Set<string>;
}

export async function readServiceCodes(client: ComplianceClient): Promise<ServiceCodes> {
  const [codeLists, classifications] = await Promise.all([client.listCodeLists(), client.listItemClassifications()]);
  return {
    lists: new Map(codeLists.data.map((list) => [list.id, new Set(list.codes.map((c) => c.code))])),
    classifications: new Set(classifications.data.map((c) => c.code)),
  };
}

/** Every row as read: a code is checked wherever it is text, whatever else is wrong with its row. */
export function checkCodes(records: ReadCatalogue['records'], codes: ServiceCodes): CatalogueProblem[] {
  const problems: CatalogueProblem[] = [];
  for (const { line, record } of records) {
    for (const [column, listId] of Object.entries(CODED_COLUMNS)) {
      const value = record[column];
      const known = codes.lists.get(listId);
      if (typeof value === 'string' && known !== undefined && !known.has(value))
        problems.push({ line, column, reason: `is not a code of the service's ${listId} list` });
    }
    const classification = record.classificationCode;
    if (typeof classification === 'string' && !codes.classifications.has(classification))
      problems.push({ line, column: 'classificationCode', reason: 'is not an item classification of the service' });
  }
  return problems;
}

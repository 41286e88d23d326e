/** Answers any line description from a catalogue, as the stock-in's `matchItemNames` activity would for its lines. */
import { answerNames, type CatalogueItem, type NameAnswers } from '../../src/contracts/item-names.js';

export function namesOf(catalogue: readonly CatalogueItem[]): NameAnswers {
  return new Proxy({} as NameAnswers, {
    get: (_, key) => (typeof key === 'string' ? answerNames(catalogue, [key])[key] : undefined),
  });
}

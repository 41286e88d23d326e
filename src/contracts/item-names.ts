/**
 * What a business's item names say of supplier line descriptions: the item a name picks, and the items resembling it.
 * Computed where the catalogue is read (an activity), so a workflow is handed answers the size of its question.
 */
import { normalise } from './stock-in.js';

export interface CatalogueItem {
  id: string;
  name: string;
}

/** What the business's item names say of one line description: the one item it names, and items that resemble it. */
export interface NameAnswer {
  itemId: string | null;
  candidates: Array<{ itemId: string; name: string }>;
}

/** Answers by normalised description: what the workflow is handed instead of the whole catalogue. */
export type NameAnswers = Readonly<Record<string, NameAnswer>>;

/** The answers for `descriptions` from the catalogue (the activity's side; the workflow sees only these). */
export function answerNames(catalogue: readonly CatalogueItem[], descriptions: readonly string[]): NameAnswers {
  const byName = new Map<string, CatalogueItem[]>();
  for (const item of catalogue) {
    const name = normalise(item.name);
    byName.set(name, [...(byName.get(name) ?? []), item]);
  }
  const answers: Record<string, NameAnswer> = {};
  for (const description of descriptions) {
    const name = normalise(description);
    if (name in answers) continue;
    const same = name === '' ? [] : (byName.get(name) ?? []);
    answers[name] = {
      itemId: same.length === 1 ? same[0]!.id : null,
      candidates: candidates(catalogue, description).map((c) => ({ itemId: c.id, name: c.name })),
    };
  }
  return answers;
}

/** Items sharing the most words with the line, best first: what an operator is offered. */
export function candidates(catalogue: readonly CatalogueItem[], description: string, max = 3): CatalogueItem[] {
  const words = new Set(
    normalise(description)
      .split(' ')
      .filter((w) => w.length > 1),
  );
  if (words.size === 0) return [];
  return catalogue
    .map((item) => ({
      item,
      shared: normalise(item.name)
        .split(' ')
        .filter((w) => words.has(w)).length,
    }))
    .filter((c) => c.shared > 0)
    .sort((a, b) => b.shared - a.shared || a.item.name.localeCompare(b.item.name))
    .slice(0, max)
    .map((c) => c.item);
}

/** Whether `pattern` is a JavaScript regular expression; fixture and fault rules refuse ones that are not. */
export function isValidRegex(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** An object whose properties are read from `target()` at use time. */
export function forwardTo<T extends object>(target: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_stub, property) {
      const actual = target();
      if (actual === undefined) throw new Error('used before beforeAll started it');
      const value: unknown = Reflect.get(actual, property, actual);
      return typeof value === 'function' ? value.bind(actual) : value;
    },
  });
}

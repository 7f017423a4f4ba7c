// The read side of a reflector's cache, as the controller reads it.
export interface Cache<T> {
  get(key: string): T | undefined;
  list(): Iterable<T>;
}

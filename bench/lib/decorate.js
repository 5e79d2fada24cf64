/**
 * Applies TypeScript-style decorators from plain JavaScript (the scenario servers are plain ESM, so
 * that they need no compile step and the peer ones can load another Nest major). Needs
 * `reflect-metadata` loaded first. No constructor injection is used, so no design-type metadata is needed.
 */

/** `@decorators` on a class. */
export function decorateClass(target, ...decorators) {
  return Reflect.decorate(decorators, target);
}

/** `@decorators` on a method (applied bottom-up, as TypeScript does). */
export function decorateMethod(target, key, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, key);
  const result = Reflect.decorate(decorators, target.prototype, key, descriptor);
  Object.defineProperty(target.prototype, key, result ?? descriptor);
}

/** `@decorator` on parameter `index` of a method. */
export function decorateParameter(target, key, index, decorator) {
  decorator(target.prototype, key, index);
}

/** The default branch of an exhaustive switch: a compile error when a case is missing, a throw at run time. */
export function checkNever(value: never, what = "value"): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}

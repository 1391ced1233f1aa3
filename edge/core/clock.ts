/**
 * The clock tenancy decisions read (key expiry, rotation grace, rate windows, budget periods). One
 * object so an in-workerd test can move time (`clock.now = () => t`) instead of sleeping; production
 * never changes it.
 */
export const clock = {
  now: (): number => Date.now(),
};

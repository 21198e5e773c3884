import type { ApplicationRecord, NumberRecord } from './records.js';
import type { State } from './state.js';

/**
 * The (sub)account's default application for numbers or for endpoints: the one whose
 * `default_number_app` or `default_endpoint_app` is set, if any.
 */
export async function defaultApplication(
  state: State,
  account: string,
  subaccount: string | null,
  which: 'default_number_app' | 'default_endpoint_app',
): Promise<ApplicationRecord | null> {
  const apps = await state.applications.all(account);
  return apps.find((a) => a[which] && a.subaccount === subaccount) ?? null;
}

/**
 * The application a number runs, for its calls and its messages alike: its own, else its
 * (sub)account's default number application (an application's `default_number_app`: "numbers
 * that don't have an app_id point to this application").
 */
export async function numberApplication(
  state: State,
  number: NumberRecord,
): Promise<ApplicationRecord | null> {
  return (
    (number.app_id ? await state.applications.get(number.account, number.app_id) : null) ??
    (await defaultApplication(state, number.account, number.subaccount, 'default_number_app'))
  );
}

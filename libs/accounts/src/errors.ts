/** Errors of the accounts lib a caller is expected to turn into a message (CLI) or an HTTP status. */
export class AccountsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input is malformed (not a UUID, unknown plan, bad email…). */
export class AccountsInputError extends AccountsError {}

/** No such account or key. */
export class AccountsNotFoundError extends AccountsError {}

/** The change conflicts with what exists (an email already registered…). */
export class AccountsConflictError extends AccountsError {}

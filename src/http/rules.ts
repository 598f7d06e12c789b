import { type FieldError, validationError } from './validation.js';

/** Cross-field rules that JSON Schema cannot state; each failure names the field like schema errors do. */
export class Rules {
  private readonly errors: FieldError[] = [];

  fail(field: string, rule: string, message: string): this {
    this.errors.push({ field, rule, message });
    return this;
  }

  check(ok: boolean, field: string, rule: string, message: string): this {
    if (!ok) this.fail(field, rule, message);
    return this;
  }

  /** Throws one 400 listing every failed rule. */
  throwIfAny(): void {
    if (this.errors.length) throw validationError(this.errors);
  }
}

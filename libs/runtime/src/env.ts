import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { errorMessage } from '@cars/contracts';

/**
 * Validates the process environment against a class-validator class at boot and fails fast
 * with every problem listed.
 */
export function loadEnv<T extends object>(cls: new () => T, env: NodeJS.ProcessEnv = process.env): T {
  const instance = plainToInstance(cls, { ...env }, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors = validateSync(instance, { skipMissingProperties: false, whitelist: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `  ${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new Error(`Invalid environment:\n${lines.join('\n')}`);
  }
  return instance;
}

/** Ends the process with a clear message when boot fails (bad environment, unreachable database…). */
export function exitOnBootFailure(error: unknown): never {
  console.error(`Startup failed: ${errorMessage(error)}`);
  process.exit(1);
}

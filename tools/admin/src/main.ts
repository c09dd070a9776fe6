import 'reflect-metadata';
import { createDataSource } from '@cars/persistence';
import { resolveDatabaseUrl } from '@cars/runtime';
import { DataSource } from 'typeorm';
import { parseFlags, UsageError } from './command';
import { COMMANDS } from './commands';
import { errorMessage } from '@cars/contracts';

/** Operator CLI: `npm run admin -- <command> [--flag value]…`, JSON on stdout. */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const list = COMMANDS.map((c) => `  ${c.usage}`).join('\n');
    console.error(`${name ? `Unknown command "${name}"` : 'No command given'}. Commands:\n${list}`);
    return 2;
  }
  let dataSource: DataSource | undefined;
  try {
    const flags = parseFlags(command.usage, rest);
    const result = await command.run({
      flags,
      db: async () => {
        dataSource ??= await createDataSource({ url: resolveDatabaseUrl(), poolSize: 2, applicationName: 'admin' }).initialize();
        return dataSource;
      },
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    console.error(`${command.name}: ${errorMessage(error)}`);
    if (error instanceof UsageError) console.error(`usage: ${command.usage}`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    await dataSource?.destroy();
  }
}

void main(process.argv.slice(2)).then((code) => process.exit(code));

// CLI entry: keepwatch serve | migrate | admin ...
// Each command imports what it runs when it runs: `admin` and `--help` do not load the service.
import { loadConfig, type Config } from './config/load.js';
import { Refusal } from './shared/refusal.js';

const USAGE = `usage: keepwatch <command> [--config PATH]

  serve     run the service (API and background work)
  migrate   apply pending database migrations and exit
  admin     operator commands over HTTP (keepwatch admin --help)`;

const COMMAND_USAGE = new Map([
  ['serve', `usage: keepwatch serve [--config PATH]

Runs the service (API, scheduler, workers) until SIGINT or SIGTERM; applies pending migrations first.`],
  ['migrate', `usage: keepwatch migrate [--config PATH]

Applies pending database migrations and exits.`],
]);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const configPath = takeConfigFlag(rest);
  if (!command || isHelp(command) || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return command ? 0 : 2;
  }
  // Before the configuration is read or a store opened: help must work on a broken setup.
  const usage = COMMAND_USAGE.get(command);
  const wantsHelp = rest.some(isHelp);
  if (usage && wantsHelp) {
    process.stdout.write(usage + '\n');
    return 0;
  }
  if (configPath === MISSING_PATH && (usage || command === 'admin') && !wantsHelp) {
    // Never fall back to ./keepwatch.toml: the file the user meant to name would be silently ignored.
    const commandUsage = usage ?? (await import('./operator/cli.js')).adminUsage();
    process.stderr.write(`--config needs a path: --config PATH or --config=PATH\n${commandUsage}\n`);
    return 2;
  }
  // Read when a command needs it: `admin` answers its help on a broken setup too.
  const readConfig = (): Config => loadConfig({ configPath: configPath === MISSING_PATH ? undefined : configPath });
  switch (command) {
    case 'serve': {
      const { serve } = await import('./server.js');
      await serve(readConfig());
      return 0;
    }
    case 'migrate': {
      const config = readConfig();
      const [{ createLogger, openStore }, { migrate }] = await Promise.all([import('./services.js'), import('./db/migrate.js')]);
      const db = await openStore(config);
      try {
        const applied = await migrate(db);
        createLogger(config).info({ applied }, applied.length ? 'migrations applied' : 'no pending migrations');
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'admin': {
      const { adminUsage, runAdmin } = await import('./operator/cli.js');
      if (isHelp(rest[0])) {
        process.stdout.write(adminUsage() + '\n');
        return 0;
      }
      return runAdmin(rest, readConfig);
    }
    default:
      process.stderr.write(`unknown command: ${command}\n${USAGE}\n`);
      return 2;
  }
}

const isHelp = (arg: string | undefined): boolean => arg === '--help' || arg === '-h';

/** `--config` given with no path: last, empty (`--config=`), or followed by an option (`--config --url ...`). */
const MISSING_PATH = Symbol('--config without a path');

/** Removes `--config PATH` from `args` wherever it stands. */
function takeConfigFlag(args: string[]): string | typeof MISSING_PATH | undefined {
  const i = args.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (i < 0) return undefined;
  const [flag] = args.splice(i, 1);
  if (flag!.includes('=')) return flag!.slice('--config='.length) || MISSING_PATH;
  if (args[i] === undefined || args[i] === '' || args[i]!.startsWith('-')) return MISSING_PATH;
  return args.splice(i, 1)[0];
}

main(process.argv.slice(2)).then(
  (code) => { if (code !== 0) process.exitCode = code; },
  (err: unknown) => {
    // Refusals a user can act on print one line; anything else prints its stack.
    process.stderr.write(err instanceof Refusal ? `${err.message}\n` : `${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);


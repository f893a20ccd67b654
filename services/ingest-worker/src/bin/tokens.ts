/**
 * `npm run tokens -- create|list|revoke|code ...|import` (docs/tokens.md, ADR 0019). The command
 * is a tokens.request, the message the ingest workers answer:
 * - with RABBITMQ_URL (the distributed mode): sent to the running ingest workers over the
 *   broker, as the gateways send theirs; they announce the change to every gateway;
 * - without it (the embedded mode): answered here by the workers' own handler on the data
 *   directory's SQLite file (DATA_DIR; WAL lets a running server keep it open), then the
 *   tokens-changed file tells a running `npm start` on that directory.
 * The first line on stderr says which. Exit 2 on a usage error, 1 on a refusal or failure.
 */
import {
  createEnvelope,
  queueNames,
  validators,
  type Envelope,
  type TokensReply,
  type TokensRequest,
} from '@screenfleet/contracts';
import {
  connectCommandBus,
  embeddedDatabaseFile,
  openEmbeddedStores,
  signalTokensChanged,
} from '@screenfleet/modes';
import { createLogger, defineConfig, loadConfig, runMain } from '@screenfleet/runtime';
import { createTokenAdmin } from '../domain/token-admin';
import { createTokensRpcHandler } from '../entry/tokens.rpc';
import {
  checkRequest,
  describeReply,
  parseTokensCommand,
  tokensUsage,
  UsageError,
} from './tokens-command';

const tokensCliConfigSpec = defineConfig({
  rabbitmqUrl: {
    env: 'RABBITMQ_URL',
    kind: 'urls',
    protocols: ['amqp', 'amqps'],
    secret: true,
    optional: true,
    doc: 'The distributed mode: ask the running ingest workers over this broker; unset: the embedded mode data directory',
  },
  dataDir: {
    env: 'DATA_DIR',
    kind: 'string',
    default: './data',
    doc: 'Without RABBITMQ_URL: the embedded mode data directory (its SQLite file)',
  },
  timeoutMs: {
    env: 'TOKENS_TIMEOUT',
    kind: 'duration',
    default: 10_000,
    doc: 'How long to wait for an ingest worker (distributed mode)',
  },
});

/** Sends each request and gives back its reply, in order. */
type Channel = (request: TokensRequest) => Promise<TokensReply>;

const logger = createLogger({ service: 'tokens', level: 'warn', destination: process.stderr });

void runMain(
  async () => {
    let command;
    try {
      command = parseTokensCommand(process.argv.slice(2), process.env);
      command.requests.forEach(checkRequest);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${tokensUsage}\n`);
      process.exit(2);
    }
    const config = loadConfig(tokensCliConfigSpec);
    const { channel, close } = config.rabbitmqUrl
      ? await overTheBroker(config.rabbitmqUrl, config.timeoutMs)
      : await onTheDataDirectory(config.dataDir);
    try {
      for (const request of command.requests) {
        const reply = await channel(request);
        if (command.json) {
          process.stdout.write(`${JSON.stringify({ ...reply, secret: command.secret })}\n`);
          if (reply.outcome === 'refused') process.exitCode = 1;
        } else {
          process.stdout.write(`${describeReply(reply, command.secret)}\n`);
        }
      }
    } finally {
      await close();
    }
  },
  { service: 'tokens', logger },
);

async function overTheBroker(urls: readonly string[], timeoutMs: number) {
  const bus = await connectCommandBus({ url: urls, connectionName: 'tokens-cli' });
  process.stderr.write('distributed: asking the ingest workers over the broker\n');
  const channel: Channel = async (request) => {
    const reply: Envelope<unknown> = await bus.call(
      queueNames.tokensRpc,
      createEnvelope('tokens.request', request),
      { timeoutMs },
    );
    const errors = validators.tokensReply.check(reply.payload);
    if (errors.length > 0) throw new Error(`an invalid reply: ${errors[0]?.detail ?? ''}`);
    return reply.payload as TokensReply;
  };
  return { channel, close: () => bus.close() };
}

async function onTheDataDirectory(dataDir: string) {
  const file = embeddedDatabaseFile(dataDir);
  const stores = await openEmbeddedStores(file, { busyTimeoutMs: 5000 });
  await stores.tokens.ensureSchema();
  await stores.audit.ensureSchema();
  let changed = false;
  const admin = createTokenAdmin({
    tokens: stores.tokens,
    audit: stores.audit,
    now: () => new Date(),
    changed: () => {
      changed = true;
    },
    observer: {
      auditWritten: () => undefined,
      auditNotWritten: (err, row) => logger.error({ err, row }, 'audit row not written'),
    },
  });
  const handle = createTokensRpcHandler({
    admin,
    metrics: { tokensRequests: { inc: () => undefined } },
    logger,
  });
  process.stderr.write(`embedded: writing ${file}\n`);
  const channel: Channel = async (request) =>
    (await handle(createEnvelope('tokens.request', request))).payload;
  return {
    channel,
    close: async () => {
      // A running `npm start` on this directory loads the tokens again (libs/modes embedded.ts).
      if (changed) signalTokensChanged(dataDir);
      await stores.close();
    },
  };
}

import { brokerLabel, brokerUrls, queueTypeMismatchHint } from './broker-urls';

describe('brokerUrls', () => {
  it('splits a comma-separated list and trims each URL', () => {
    expect(brokerUrls('amqp://a:5681, amqp://b:5682 ,amqp://c:5683')).toEqual(['amqp://a:5681', 'amqp://b:5682', 'amqp://c:5683']);
  });

  it('takes one URL as a list of one', () => {
    expect(brokerUrls('amqp://guest:guest@127.0.0.1:5672/v')).toEqual(['amqp://guest:guest@127.0.0.1:5672/v']);
  });

  it('refuses a list without a URL', () => {
    expect(() => brokerUrls(' , ')).toThrow('RABBITMQ_URL names no broker');
  });
});

describe('brokerLabel', () => {
  it('names host and port, never the credentials', () => {
    expect(brokerLabel('amqp://user:secret@rmq-1:5682/cars')).toBe('rmq-1:5682');
    expect(brokerLabel('amqps://user:secret@rmq-1/cars')).toBe('rmq-1:5671');
  });
});

describe('queueTypeMismatchHint', () => {
  it('names the queue and the admin command for a classic queue met by a quorum declare', () => {
    const hint = queueTypeMismatchHint(
      "Operation failed: QueueDeclare; 406 (PRECONDITION-FAILED) with message \"PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'observations' in vhost '/': received the value 'quorum' of type 'longstr' but current is none\"",
    );
    expect(hint).toContain("queue 'observations'");
    expect(hint).toContain('npm run admin -- queues:migrate');
  });

  it('names the fix for a durable RPC queue met by a transient declare', () => {
    const hint = queueTypeMismatchHint(
      "PRECONDITION_FAILED - inequivalent arg 'durable' for queue 'query.rpc' in vhost '/': received 'false' but current is 'true'",
    );
    expect(hint).toContain("queue 'query.rpc'");
    expect(hint).toContain('transient');
    expect(hint).toContain('queues:migrate');
  });

  it('is null for other refusals', () => {
    expect(queueTypeMismatchHint("PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'query.rpc'")).toBeNull();
    expect(queueTypeMismatchHint('Connection closed')).toBeNull();
  });
});

import { IsInt, Min } from 'class-validator';
import { RpcReply, rpcOk, ValidatePayload } from './rpc';

class CountQuery {
  @IsInt()
  @Min(1)
  n: number;
}

class Handler {
  readonly seen: CountQuery[] = [];

  @ValidatePayload(CountQuery)
  async handle(query: CountQuery): Promise<RpcReply<number>> {
    this.seen.push(query);
    return rpcOk(query.n * 2);
  }
}

describe('ValidatePayload', () => {
  it('hands the method a validated DTO, or answers 400 naming each bad parameter without running it', async () => {
    const handler = new Handler();
    expect(await handler.handle({ n: 21 })).toEqual({ ok: true, value: 42 });
    expect(handler.seen[0]).toBeInstanceOf(CountQuery);
    const refused = await handler.handle({ n: 0, extra: true } as unknown as CountQuery);
    expect(refused).toMatchObject({ ok: false, status: 400, body: { error: 'Validation Error' } });
    expect(Object.keys((refused as { body: { details: Record<string, string[]> } }).body.details).sort()).toEqual(['extra', 'n']);
    expect(handler.seen).toHaveLength(1);
    expect(Handler.prototype.handle.name).toBe('handle');
  });
});

import { Injectable } from '@nestjs/common';
import { NameListResponse, RpcReply, rpcError, rpcOk, validationError } from '@cars/contracts';
import { MakesRepository } from './makes.repository';

@Injectable()
export class MakesService {
  constructor(private readonly repository: MakesRepository) {}

  async listMakes(): Promise<NameListResponse> {
    return { data: await this.repository.listMakeNames() };
  }

  async listModels(make: string): Promise<RpcReply<NameListResponse>> {
    const found = await this.repository.findMake(make);
    if (!found) {
      return rpcError(400, validationError({ make: [`unknown make "${make}"; GET /makes lists the valid names`] }));
    }
    if (found.name !== make) {
      return rpcError(
        400,
        validationError({ make: [`unknown make "${make}"; did you mean "${found.name}"? Make names are exact`] }),
      );
    }
    return rpcOk({ data: await this.repository.listModelNames(found.id) });
  }
}

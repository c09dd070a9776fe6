import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ListModelsQueryDto,
  NameListResponse,
  QueryMessages,
  QueryPatterns,
  RpcReply,
  rpcError,
  rpcOk,
  validatePlain,
  validationError,
} from '@cars/contracts';
import { MakesService } from './makes.service';

type Request<P extends keyof QueryMessages> = QueryMessages[P]['request'];

@Controller()
export class MakesHandler {
  constructor(private readonly makes: MakesService) {}

  @MessagePattern(QueryPatterns.ListMakes)
  async listMakes(): Promise<RpcReply<NameListResponse>> {
    return rpcOk(await this.makes.listMakes());
  }

  @MessagePattern(QueryPatterns.ListModels)
  async listModels(@Payload() payload: Request<typeof QueryPatterns.ListModels>): Promise<RpcReply<NameListResponse>> {
    const input = validatePlain(ListModelsQueryDto, payload);
    if (!input.ok) return rpcError(400, validationError(input.details));
    return this.makes.listModels(input.value.make);
  }
}

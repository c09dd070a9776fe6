import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { StatementTimeoutReplies } from '@cars/persistence';
import {
  ListModelsQueryDto,
  NameListResponse,
  QueryMessages,
  QueryPatterns,
  rpcOk,
  RpcReply,
  ValidatePayload,
} from '@cars/contracts';
import { MakesService } from './makes.service';

type Request<P extends keyof QueryMessages> = QueryMessages[P]['request'];

@Controller()
@UseFilters(StatementTimeoutReplies)
export class MakesHandler {
  constructor(private readonly makes: MakesService) {}

  @MessagePattern(QueryPatterns.ListMakes)
  async listMakes(): Promise<RpcReply<NameListResponse>> {
    return rpcOk(await this.makes.listMakes());
  }

  @MessagePattern(QueryPatterns.ListModels)
  @ValidatePayload(ListModelsQueryDto)
  async listModels(@Payload() payload: Request<typeof QueryPatterns.ListModels>): Promise<RpcReply<NameListResponse>> {
    return this.makes.listModels(payload.make);
  }
}

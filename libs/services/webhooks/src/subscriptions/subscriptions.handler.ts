import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ListWebhooksRequestDto, RpcRequest, ValidatePayload, WebhooksPatterns } from '@cars/contracts';
import { SubscriptionsService } from './subscriptions.service';

type Request<P extends keyof typeof WebhooksPatterns> = RpcRequest<(typeof WebhooksPatterns)[P]>;

@Controller()
export class SubscriptionsHandler {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @MessagePattern(WebhooksPatterns.List)
  @ValidatePayload(ListWebhooksRequestDto)
  list(@Payload() request: ListWebhooksRequestDto) {
    return this.subscriptions.list(request);
  }

  @MessagePattern(WebhooksPatterns.Create)
  create(@Payload() request: Request<'Create'>) {
    return this.subscriptions.create(request.account_id, request.body);
  }

  @MessagePattern(WebhooksPatterns.Get)
  get(@Payload() request: Request<'Get'>) {
    return this.subscriptions.get(request.account_id, request.id);
  }

  @MessagePattern(WebhooksPatterns.Update)
  update(@Payload() request: Request<'Update'>) {
    return this.subscriptions.update(request.account_id, request.id, request.body);
  }

  @MessagePattern(WebhooksPatterns.Delete)
  delete(@Payload() request: Request<'Delete'>) {
    return this.subscriptions.delete(request.account_id, request.id);
  }

  @MessagePattern(WebhooksPatterns.SendTest)
  sendTest(@Payload() request: Request<'SendTest'>) {
    return this.subscriptions.sendTest(request.account_id, request.id);
  }

  @MessagePattern(WebhooksPatterns.RotateSecret)
  rotateSecret(@Payload() request: Request<'RotateSecret'>) {
    return this.subscriptions.rotateSecret(request.account_id, request.id);
  }
}

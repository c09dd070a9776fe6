import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RpcRequest, WebhooksPatterns } from '@cars/contracts';
import { DeliveriesService } from './deliveries.service';

type Request<P extends keyof typeof WebhooksPatterns> = RpcRequest<(typeof WebhooksPatterns)[P]>;

@Controller()
export class DeliveriesHandler {
  constructor(private readonly deliveries: DeliveriesService) {}

  @MessagePattern(WebhooksPatterns.ListDeliveries)
  recent(@Payload() request: Request<'ListDeliveries'>) {
    return this.deliveries.recent(request.account_id, request.id);
  }

  @MessagePattern(WebhooksPatterns.RetryDelivery)
  retry(@Payload() request: Request<'RetryDelivery'>) {
    return this.deliveries.retry(request.account_id, request.id, request.delivery_id);
  }

  @MessagePattern(WebhooksPatterns.Recover)
  recover(@Payload() request: Request<'Recover'>) {
    return this.deliveries.recover(request.account_id, request.id, request.body);
  }
}

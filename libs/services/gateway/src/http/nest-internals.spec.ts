import 'reflect-metadata';
import { Body, Controller, Get, Param, Post, Query, RequestMethod } from '@nestjs/common';
import { readsQuery, routeMethod, routePath } from './nest-internals';

/**
 * nest-internals.ts reads metadata that Nest's decorators write under private keys: these checks
 * run the installed @nestjs/common's own decorators and fail the day an upgrade moves or reshapes
 * what they record.
 */

@Controller('cars')
class CarsController {
  @Get(':id/bids')
  bids(@Param('id') id: string): string {
    return id;
  }

  @Get()
  search(@Query() query: object): object {
    return query;
  }

  @Post('notes')
  note(@Body() body: object, @Query('draft') draft: string): object {
    return { body, draft };
  }

  helper(): void {}
}

describe('Nest routing metadata', () => {
  const proto = CarsController.prototype;

  it('reads the HTTP method of a route handler, and none of a plain method', () => {
    expect(routeMethod(proto.bids)).toBe(RequestMethod.GET);
    expect(routeMethod(proto.note)).toBe(RequestMethod.POST);
    expect(routeMethod(proto.helper)).toBeUndefined();
  });

  it('reads the paths of the controller and of its handlers', () => {
    expect(routePath(CarsController)).toBe('cars');
    expect(routePath(proto.bids)).toBe(':id/bids');
    expect(routePath(proto.search)).toBe('/');
  });

  it('tells the handlers that take a query (whole or one parameter) from those that do not', () => {
    expect(readsQuery(CarsController, 'search')).toBe(true);
    expect(readsQuery(CarsController, 'note')).toBe(true);
    expect(readsQuery(CarsController, 'bids')).toBe(false);
    expect(readsQuery(CarsController, 'helper')).toBe(false);
  });
});

import { Injectable } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';

/** The controller method behind one Fastify route. */
export interface ControllerMethod {
  controller: Function;
  method: Function;
  methodName: string;
  /** The controller's instance (controllers are singletons in the gateway). */
  instance: unknown;
}

/**
 * Traces a Fastify route back to the controller method Nest registered it for, from the gateway's
 * `onRoute` hook, so that per-route behaviour decided by decorators (authentication, direct
 * answers) is fixed once at start instead of being looked up on every request.
 *
 * Nest hands each route to Fastify as a handler named `<Controller>.<method>` (platform-fastify
 * keeps the name when it wraps the handler); the method is the one of that name, on the controller
 * of that name, that is an HTTP route (a message-only controller may share the name). A route that
 * resolves to no method, or to more than one, is an error: the caller fails the start.
 */
@Injectable()
export class ControllerMethods {
  private controllers?: Map<string, Array<{ type: Function; instance: unknown }>>;

  constructor(private readonly modules: ModulesContainer) {}

  resolve(handlerName: string, route: string): ControllerMethod {
    const dot = handlerName.indexOf('.');
    const methodName = handlerName.slice(dot + 1);
    const candidates = (dot > 0 ? this.byName().get(handlerName.slice(0, dot)) ?? [] : []).filter(({ type }) => {
      const method: unknown = type.prototype[methodName];
      return typeof method === 'function' && Reflect.getMetadata(PATH_METADATA, method) !== undefined;
    });
    if (candidates.length !== 1) {
      throw new Error(
        `The route ${route} (handler "${handlerName}") resolves to ${candidates.length === 0 ? 'no controller method' : 'several controller methods'}`,
      );
    }
    const [{ type, instance }] = candidates;
    return { controller: type, method: type.prototype[methodName] as Function, methodName, instance };
  }

  private byName(): Map<string, Array<{ type: Function; instance: unknown }>> {
    if (this.controllers) return this.controllers;
    const byName = new Map<string, Array<{ type: Function; instance: unknown }>>();
    for (const module of this.modules.values()) {
      for (const wrapper of module.controllers.values()) {
        const type = wrapper.metatype as Function | null;
        if (!type) continue;
        const known = byName.get(wrapper.name) ?? [];
        if (!known.some((entry) => entry.type === type)) byName.set(wrapper.name, [...known, { type, instance: wrapper.instance }]);
      }
    }
    this.controllers = byName;
    return byName;
  }
}

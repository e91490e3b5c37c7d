import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';

export class ErrorDetailDto {
  @ApiProperty({
    example: 'allowed_origin.origin',
    description: "The field's path in the body: an object's key after a dot, an array's element by its index in brackets (`subject.email`, `purposes[1]`, `records[3].subject.email`)",
  })
  field: string;
  @ApiProperty({ example: 'must not have a path' }) reason: string;
}

/** The one error shape every endpoint answers with. */
export class ErrorBodyDto {
  @ApiProperty({ example: 'The request did not pass validation' }) message: string;
  @ApiProperty({ example: 'validation_failed' }) code: string;
  @ApiPropertyOptional({ type: [ErrorDetailDto], maxItems: 100, description: 'At most 100; the rest are counted in details_omitted' }) details?: ErrorDetailDto[];
  @ApiPropertyOptional({ example: 11900, description: 'How many details were left out when there were more than 100' }) details_omitted?: number;
  @ApiProperty({ example: 'req_0123456789abcdef' }) request_id: string;
  @ApiPropertyOptional({ example: 'DE', description: 'Only on 421 wrong_country' }) home_country?: string;
}

/** Documents the error statuses shared by authenticated JSON endpoints. */
export const ApiErrorResponses = () =>
  applyDecorators(
    ApiExtraModels(ErrorBodyDto),
    ...[
      [400, 'Malformed JSON or invalid parameters'],
      [401, 'Missing or invalid credentials'],
      [403, 'Credential lacks the permission, or the origin is not allowed'],
      [404, 'Not found, or not visible to this credential'],
      [413, 'Body larger than the route accepts (1 MiB; imports 16 MiB)'],
      [422, 'Validation failed; details name the fields'],
      [429, 'Rate limited; see Retry-After, RateLimit and RateLimit-Policy'],
      [500, 'Server error; carries request_id only'],
    ].map(([status, description]) =>
      ApiResponse({ status: status as number, description: description as string, schema: { $ref: getSchemaPath(ErrorBodyDto) } }),
    ),
  );

/** The 421 of a resource whose home is another country: `wrong_country` with `home_country` and nothing else. */
export const ApiWrongCountry = (what: string) =>
  ApiResponse({ status: 421, description: `${what} lives in another country: \`wrong_country\` with \`home_country\` only`, schema: { $ref: getSchemaPath(ErrorBodyDto) } });

/** A 409 `conflict` (or `illegal_transition`) the route answers, and when. */
export const ApiConflict = (when: string) => ApiResponse({ status: 409, description: when, schema: { $ref: getSchemaPath(ErrorBodyDto) } });

/** The 501 of a route whose capability is not built yet. */
export const ApiNotImplemented = (what: string) =>
  ApiResponse({ status: 501, description: `${what} (\`not_implemented\`)`, schema: { $ref: getSchemaPath(ErrorBodyDto) } });

/** A `{data, next_cursor}` page of `model`. */
export const ApiPage = (model: Type<unknown>, description?: string) =>
  applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status: 200,
      ...(description ? { description } : {}),
      schema: {
        type: 'object',
        required: ['data', 'next_cursor'],
        properties: {
          data: { type: 'array', items: { $ref: getSchemaPath(model) } },
          next_cursor: { type: ['string', 'null'] as unknown as 'string' },
        },
      },
    }),
  );

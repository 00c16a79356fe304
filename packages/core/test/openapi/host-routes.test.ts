import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { BootError, createEntityApi } from '@entity-records/core';
import { testEntities } from '../../../../test/support/fixtures';

const ROUTES = `
/**
 * @openapi
 * /reports/daily:
 *   get:
 *     operationId: dailyReport
 *     tags: [Reports]
 *     responses:
 *       '200':
 *         description: The report
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/DailyReport' }
 * /api/Brand:
 *   options:
 *     operationId: brandOptions
 *     responses: { '204': { description: Allowed methods } }
 * components:
 *   schemas:
 *     DailyReport: { type: object, properties: { count: { type: integer } } }
 * tags:
 *   - name: Reports
 *     description: Host reports
 */
export function mount() {}
`;

describe('openapi.apis: the host routes described by JSDoc', () => {
  let dir: string;
  beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-jsdoc-'))));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('joins their paths, schemas and tags to the generated document, which stays valid', async () => {
    const file = path.join(dir, 'reports.ts');
    fs.writeFileSync(file, ROUTES);
    const api = createEntityApi({ database: 'sqlite::memory:', entities: testEntities, openapi: { apis: [path.join(dir, '*.ts')] } });
    try {
      const doc = api.openapi() as { paths: Record<string, Record<string, { operationId?: string }>>; components: { schemas: Record<string, unknown> }; tags: { name: string; description?: string }[] };
      expect(doc.paths['/reports/daily'].get.operationId).toBe('dailyReport');
      expect(doc.paths['/api/v1/reports/daily']).toBeUndefined();
      // a host operation joins a generated path without replacing its other methods
      expect(doc.paths['/api/Brand'].options.operationId).toBe('brandOptions');
      expect(doc.paths['/api/Brand'].get.operationId).toBe('listBrand');
      expect(doc.components.schemas.DailyReport).toEqual({ type: 'object', properties: { count: { type: 'integer' } } });
      expect(doc.tags).toContainEqual({ name: 'Reports', description: 'Host reports' });
      await expect(SwaggerParser.validate(doc as never)).resolves.toBeDefined();
    } finally {
      await api.close();
    }
  });

  it('refuses to start when a block is not valid YAML', () => {
    const file = path.join(dir, 'broken.js');
    fs.writeFileSync(file, '/**\n * @openapi\n * /x:\n *   get: [unclosed\n */\n');
    expect(() => createEntityApi({ database: 'sqlite::memory:', entities: testEntities, openapi: { apis: [file] } })).toThrow(BootError);
  });
});

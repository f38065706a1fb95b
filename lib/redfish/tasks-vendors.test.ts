// Pure pieces: monitor interpretation across vendor styles, and vendor profile selection.
import type { RedfishResponse } from './client.js';
import { interpretMonitor, taskFromResponse } from './tasks.js';
import type { Task } from './types.js';
import { profileFor } from './vendors.js';

const res = (
  status: number,
  body?: unknown,
  extra: Partial<RedfishResponse<Task>> = {},
): RedfishResponse<Task> => ({
  headers: {},
  ...extra,
  status,
  body: body as Task | undefined,
});

describe('task monitors', () => {
  it('finds the monitor in Location, then TaskMonitor, then the Task @odata.id', () => {
    expect(taskFromResponse(res(202, { TaskMonitor: '/m/1' }, { location: '/loc/1' }))).toEqual({
      monitor: '/loc/1',
    });
    expect(taskFromResponse(res(202, { TaskMonitor: '/m/1' }))).toEqual({ monitor: '/m/1' });
    expect(taskFromResponse(res(202, { '@odata.id': '/t/1', TaskState: 'New' }))).toEqual({
      monitor: '/t/1',
    });
    expect(taskFromResponse(res(202, { '@odata.id': '/Systems/1' }))).toBeUndefined();
    expect(taskFromResponse(res(204))).toBeUndefined();
  });

  it('treats 202 as running with its Retry-After, and a terminal Task as done', () => {
    expect(interpretMonitor(res(202, undefined, { retryAfterMs: 2000 }))).toEqual({ delayMs: 2000 });
    expect(interpretMonitor(res(202, { TaskState: 'Running', PercentComplete: 40 }))).toMatchObject({
      running: { state: 'Running', percent: 40 },
    });
    expect(
      interpretMonitor(res(200, { TaskState: 'Exception', Messages: [{ MessageId: 'X' }] })).done,
    ).toMatchObject({
      state: 'Exception',
    });
    // A Task that says Running with a 200 is still running.
    expect(interpretMonitor(res(200, { TaskState: 'Running' })).done).toBeUndefined();
    expect(interpretMonitor(res(204)).done?.state).toBe('Completed');
  });

  it('HPE: an error envelope whose MessageId says Success means Completed', () => {
    const body = {
      error: { code: 'iLO.0.10.ExtendedInfo', '@Message.ExtendedInfo': [{ MessageId: 'Base.1.4.Success' }] },
    };
    expect(interpretMonitor(res(200, body)).done?.state).toBe('Completed');
  });

  it('Lenovo: a Completed task that transitioned to a job is followed to the job', () => {
    const body = {
      TaskState: 'Completed',
      Messages: [
        {
          MessageId: 'TaskEvent.1.0.OperationTransitionedToJob',
          MessageArgs: ['/redfish/v1/JobService/Jobs/7'],
        },
      ],
    };
    expect(interpretMonitor(res(200, body))).toEqual({ follow: '/redfish/v1/JobService/Jobs/7' });
  });

  it('Dell: JobState maps onto task states', () => {
    expect(interpretMonitor(res(200, { JobState: 'Scheduled' })).running?.state).toBe('Pending');
    expect(interpretMonitor(res(200, { JobState: 'Failed' })).done?.state).toBe('Exception');
    expect(interpretMonitor(res(200, { JobState: 'Completed' })).done?.state).toBe('Completed');
  });
});

describe('vendor profiles', () => {
  it.each([
    ['Dell Inc.', 'dell'],
    ['HPE', 'hpe'],
    ['Hewlett Packard Enterprise', 'hpe'],
    ['Lenovo', 'lenovo'],
    ['Supermicro', 'supermicro'],
    ['Super Micro Computer, Inc.', 'supermicro'],
    ['Contoso', 'generic'],
    [undefined, 'generic'],
  ])('%s -> %s', (manufacturer, name) => {
    expect(profileFor(manufacturer).name).toBe(name);
  });
});

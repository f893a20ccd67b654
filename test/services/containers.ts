import type { StartedTestContainer } from 'testcontainers';

/** Whether a Docker engine answers; rejects in a few ms where there is none (our machines). */
export async function dockerAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

export interface ContainerServices {
  rabbitmqUrl: string;
  mongodbUrl: string;
  containers: StartedTestContainer[];
}

export async function startContainers(): Promise<ContainerServices> {
  const { RabbitMQContainer } = await import('@testcontainers/rabbitmq');
  const { MongoDBContainer } = await import('@testcontainers/mongodb');
  const [rabbit, mongo] = await Promise.all([
    new RabbitMQContainer('rabbitmq:3.13-management').start(),
    new MongoDBContainer('mongo:7').start(),
  ]);
  return {
    rabbitmqUrl: rabbit.getAmqpUrl(),
    mongodbUrl: `${mongo.getConnectionString()}?directConnection=true`,
    containers: [rabbit, mongo],
  };
}

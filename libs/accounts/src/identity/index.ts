export * from './password';
export * from './opaque-token';
export * from './credentials.repository';
export * from './sessions.repository';
export * from './email-verifications.repository';
export * from './identity.service';

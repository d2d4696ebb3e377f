-- Stable ids given by organizers (CreatePlayerRequest.id: letters, digits, '-', '_', not digits
-- only): an alias of the principal's numeric id, unique when set. Keep in step with
-- ../postgres/0003_principal_handles.sql.
ALTER TABLE principals ADD COLUMN handle TEXT;
CREATE UNIQUE INDEX principals_handle ON principals (handle);

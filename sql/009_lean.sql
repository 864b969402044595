-- 009_lean.sql: a message's content is kept once (STORE-10, decision-047).
--
-- History messages are stored without taskId and contextId (the task row holds both;
-- the store puts them back when it reads a message). A task whose status message is a
-- history message keeps its position in status_pos and no copy in status_message_json.
-- Events written from now on refer to history messages instead of copying them
-- ({"$message": pos}, {"$messages": [first, last]}) and leave out the task's own ids;
-- events written before stay whole copies and read as they always did.
ALTER TABLE tasks ADD COLUMN status_pos INTEGER CHECK (status_pos IS NULL OR status_pos > 0);
UPDATE messages SET json = json_remove(json, '$.taskId', '$.contextId')
WHERE json_valid(json) AND json_type(json) = 'object';


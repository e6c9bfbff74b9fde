/** Annotations: days of a website marked with a note. Deleting keeps the row (deleted_at): nothing stored is lost. */
import { ddlMigration } from "../platform/Ddl.ts"

export const annotationsMigration = ddlMigration(`
    CREATE TABLE annotations (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      day date NOT NULL,
      note text NOT NULL CHECK (char_length(note) BETWEEN 1 AND 280),
      category text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    );
    CREATE INDEX annotations_project_day ON annotations (project_id, day, id) WHERE deleted_at IS NULL;
`)

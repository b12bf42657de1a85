// The class's pages in the browser: the instructor's page and a learner's page.
// Both follow the room through one long-lived response from this server (server-sent
// events); every action is one JSON request.

import { instructor } from "./class_instructor.js";
import { learner } from "./class_learner.js";
import { body } from "./class_page.js";

if (body.dataset.role === "instructor") instructor();
else if (body.dataset.role === "learner") learner();

// Package blame answers, for one field of a child ork wrote, who holds it now and which of
// ork's decisions set it: it joins the child's managedFields, its decision annotation, the
// owner's status.lastDecision and, when given, the decision log. It is pure: the command
// reads the objects and the log.
package blame

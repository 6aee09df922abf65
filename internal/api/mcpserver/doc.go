// Package mcpserver serves the API's agents over MCP (Server): every agent
// is a tool whose call starts (or continues) an A2A task through the
// agent's TaskService and answers when the task completes, fails or asks;
// a question is put to the user by MCP elicitation when the client can
// show one, else the result carries the task's ID and question, answered
// with the a2aflow_reply tool (a2aflow_get_task and a2aflow_cancel_task
// read and cancel a task). MCP "tasks" are not offered: the pinned go-sdk
// (v1.8.0) does not support them; a long call reports progress
// notifications instead.
package mcpserver
